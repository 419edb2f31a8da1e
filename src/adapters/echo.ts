import type { Message, RunAgentInput } from "@ag-ui/core";
import { v4 as uuidv4 } from "uuid";
import { type AdapterRunContext, type AgentAdapter, sleep } from "./types.js";

export interface EchoOptions {
  /** Pause between streamed words, to make streaming visible in a demo. */
  delayMs?: number;
}

/** The word that makes the echo agent ask for approval before answering. */
export const ECHO_APPROVAL_TRIGGER = "/approve";

/**
 * The demo agent. It streams back the last user message word by word, keeps a small state
 * (`turns`, `last_message`), and when the message starts with `/approve` it interrupts with an
 * approval request; the resumed run echoes the message when approved (`{"approved": true}`) and
 * says it did not when told no, clearing the pending approval from its state either way.
 */
export class EchoAdapter implements AgentAdapter {
  constructor(private readonly options: EchoOptions = {}) {}

  capabilities() {
    return {
      humanInTheLoop: { supported: true, interrupts: true, approvals: true },
      state: { snapshots: true, deltas: false },
      transport: { streaming: true },
    };
  }

  async *run(input: RunAgentInput, context: AdapterRunContext): AsyncIterable<unknown> {
    const { threadId, runId } = input;
    yield { type: "RUN_STARTED", threadId, runId };

    const prior = isObject(input.state) ? input.state : {};
    const turns = typeof prior.turns === "number" ? prior.turns : 0;
    const lastUser = lastUserText(input.messages);

    const resume = input.resume?.[0];
    if (resume) {
      const approved = resume.status !== "cancelled" && isApproval(resume.payload);
      const asked = stripTrigger(lastUser);
      const answer =
        resume.status === "cancelled"
          ? "The request was cancelled; nothing was done."
          : approved
            ? `Approved with ${JSON.stringify(resume.payload ?? null)}: ${asked}`
            : `Not approved, so not echoed: "${asked}"`;
      yield* this.say(answer, context);
      // The question is answered either way: nothing is pending any more.
      const { pending_approval: _answered, ...rest } = prior;
      yield {
        type: "STATE_SNAPSHOT",
        snapshot: { ...rest, turns: turns + 1, approved },
      };
      yield { type: "RUN_FINISHED", threadId, runId, result: { echoed: approved ? answer : null } };
      return;
    }

    if (lastUser.startsWith(ECHO_APPROVAL_TRIGGER)) {
      yield { type: "STATE_SNAPSHOT", snapshot: { ...prior, turns, pending_approval: true } };
      yield {
        type: "RUN_FINISHED",
        threadId,
        runId,
        outcome: {
          type: "interrupt",
          interrupts: [
            {
              id: uuidv4(),
              reason: "approval",
              message: `Approve echoing "${stripTrigger(lastUser)}"?`,
              responseSchema: { type: "object", properties: { approved: { type: "boolean" } } },
            },
          ],
        },
      };
      return;
    }

    const text = lastUser === "" ? "(nothing to echo)" : lastUser;
    yield* this.say(text, context);
    yield { type: "STATE_SNAPSHOT", snapshot: { turns: turns + 1, last_message: text } };
    yield { type: "RUN_FINISHED", threadId, runId, result: { echoed: text } };
  }

  private async *say(text: string, context: AdapterRunContext): AsyncIterable<unknown> {
    const messageId = uuidv4();
    yield { type: "TEXT_MESSAGE_START", messageId, role: "assistant" };
    const words = text.split(/(?<=\s)/);
    for (const word of words) {
      await sleep(this.options.delayMs ?? 0, context.signal);
      yield { type: "TEXT_MESSAGE_CONTENT", messageId, delta: word };
    }
    yield { type: "TEXT_MESSAGE_END", messageId };
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An answer that approves: `{"approved": true}`, or `true` itself. */
function isApproval(payload: unknown): boolean {
  return payload === true || (isObject(payload) && payload.approved === true);
}

function stripTrigger(text: string): string {
  return text.startsWith(ECHO_APPROVAL_TRIGGER)
    ? text.slice(ECHO_APPROVAL_TRIGGER.length).trim()
    : text;
}

function lastUserText(messages: Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== "user") continue;
    const content = (message as { content?: unknown }).content;
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      return content
        .map((part) => (isObject(part) && part.type === "text" ? String(part.text ?? "") : ""))
        .join("");
    }
    return "";
  }
  return "";
}
