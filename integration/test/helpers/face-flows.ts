import { type BaseEvent, HttpAgent } from "@ag-ui/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LONG_STORY } from "../../agents/script.mjs";
import { type Json, lastReply, textOf } from "./acp.js";
import { eventually } from "./services.js";
import { cancelExpectation, type Flow, runsFlow, type Stack } from "./stack.js";

/**
 * The six flows of a stack through our AG-UI face, driven by @ag-ui/client's HttpAgent as a
 * CopilotKit or any AG-UI web client would. The client validates every event it receives and
 * logs `[ag-ui]` warnings for material AG-UI 1.0 does not describe: each flow requires none.
 */
export function faceFlows(stack: Stack): void {
  describe(`${stack.title} through the AG-UI face (@ag-ui/client HttpAgent)`, () => {
    let warnings: string[] = [];
    beforeEach(() => {
      warnings = [];
      const record = (...args: unknown[]) => {
        const line = args.map(String).join(" ");
        if (line.includes("[ag-ui]")) warnings.push(line);
      };
      vi.spyOn(console, "warn").mockImplementation(record);
      vi.spyOn(console, "error").mockImplementation(record);
    });
    afterEach(() => {
      vi.restoreAllMocks();
      expect(warnings, "the client's complaints about our events").toEqual([]);
    });

    const flow = (name: Flow, title: string, test: () => Promise<void>) => {
      if (runsFlow(stack, name)) it(title, test);
    };
    const agent = (threadId = crypto.randomUUID()) =>
      new HttpAgent({
        url: `${stack.server().acp.base}/ag-ui/${stack.server().agentName}`,
        threadId,
      });
    const say = (client: HttpAgent, text: string) =>
      client.addMessage({ id: crypto.randomUUID(), role: "user", content: text });
    const events = (into: BaseEvent[]) => ({
      onEvent: ({ event }: { event: BaseEvent }) => {
        into.push(event);
      },
    });

    flow("text", "streams a text reply as it is written", async () => {
      const client = agent();
      say(client, "hello");
      const seen: BaseEvent[] = [];
      const { newMessages } = await client.runAgent({}, events(seen));
      const deltas = seen.filter((e) => e.type === "TEXT_MESSAGE_CONTENT");
      expect(deltas.length).toBeGreaterThan(1);
      expect(textOf(newMessages.at(-1) as never)).toBe("You said: hello");
      expect(seen.at(-1)?.type).toBe("RUN_FINISHED");
    });

    flow("tool", "calls a server-side tool and answers with its result", async () => {
      const client = agent();
      say(client, "weather in Paris");
      await client.runAgent();
      const messages = client.messages;
      const call = messages.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []) : []))[0];
      expect(call?.function.name).toBe("get_weather");
      const result = messages.find((m) => m.role === "tool");
      expect(result && "toolCallId" in result ? result.toolCallId : undefined).toBe(call?.id);
      expect(lastReply(messages)).toBe("It is sunny in Paris, 21 °C.");
    });

    flow(
      "state",
      "hands the client's state to the agent and streams the agent's state back",
      async () => {
        const client = agent();
        client.setState({ notes: ["from client"] });
        say(client, "remember milk");
        await client.runAgent();
        expect(client.state).toMatchObject({ notes: ["from client", "milk"] });
        expect(textOf(client.messages.at(-1) as never)).toMatch(/^Noted/);
      },
    );

    flow("history", "gives the agent the first turn in the second, on one thread", async () => {
      const threadId = crypto.randomUUID();
      const client = agent(threadId);
      say(client, "my name is Ana");
      await client.runAgent();
      say(client, "what did I say?");
      await client.runAgent();
      const replies = client.messages.filter((m) => m.role === "assistant").map(textOf as never);
      expect(replies).toEqual([
        "You said: my name is Ana",
        "You said: my name is Ana / what did I say?",
      ]);
      // The same conversation is an ACP thread, with both runs.
      const runs = await stack.server().acp.ok<Json[]>("GET", `/threads/${threadId}/runs`);
      expect(runs.map((r) => r.status)).toEqual(["success", "success"]);
      if (stack.upstream.threadMessages) {
        const upstream = await stack.upstream.threadMessages(threadId);
        expect(upstream.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
      }
    });

    flow(
      "interrupt",
      "ends a run with an interrupt outcome and continues when resumed",
      async () => {
        const client = agent();
        say(client, "deploy production");
        const seen: BaseEvent[] = [];
        await client.runAgent({}, events(seen));
        const finished = seen.at(-1) as BaseEvent & {
          outcome?: { type: string; interrupts?: Array<{ id: string; reason?: string }> };
        };
        expect(finished.type).toBe("RUN_FINISHED");
        expect(finished.outcome?.type).toBe("interrupt");
        const interrupt = finished.outcome!.interrupts![0]!;
        expect(interrupt.reason).toBe(stack.interruptType);
        if (stack.approvalHasSchema) {
          const payload = { approved: "yes" };
          const wrong = { interruptId: interrupt.id, status: "resolved" as const, payload };
          await expect(client.runAgent({ resume: [wrong] })).rejects.toThrow(/422/);
        }
        await client.runAgent({
          resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }],
        });
        expect(lastReply(client.messages)).toBe("Deployment approved.");
        // The conversation goes on after the approval, on the same thread.
        say(client, "thanks");
        const next: BaseEvent[] = [];
        await client.runAgent({}, events(next));
        if (stack.stuckAfterInterrupt) {
          const error = next.find((e) => e.type === "RUN_ERROR") as
            | { message?: string }
            | undefined;
          expect(error?.message, stack.stuckAfterInterrupt.reason).toMatch(
            stack.stuckAfterInterrupt.error,
          );
          return;
        }
        expect(lastReply(client.messages)).toBe("You said: deploy production / thanks");
      },
    );

    const abort = cancelExpectation(stack, "stops the run when the client aborts");
    flow("cancel", abort.title, async () => {
      const threadId = crypto.randomUUID();
      const client = agent(threadId);
      say(client, "tell me a long story");
      let streamed = "";
      const running = client.runAgent(
        {},
        {
          onTextMessageContentEvent: ({ event }) => {
            streamed += event.delta;
            client.abortRun();
          },
        },
      );
      await running.catch(() => undefined);
      expect(streamed.length).toBeGreaterThan(0);
      expect(streamed.length).toBeLessThan(LONG_STORY.length);
      const runs = await eventually(
        "the AG-UI run's ACP run to stop",
        () => stack.server().acp.ok<Json[]>("GET", `/threads/${threadId}/runs`),
        (list) => list.length === 1 && list[0]!.status !== "pending",
      );
      expect(runs[0]!.status).toBe("error");
      abort.check(await stack.upstream.stopSeen(threadId));
    });
  });
}
