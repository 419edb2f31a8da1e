import { describe, expect, it } from "vitest";
import { LONG_STORY } from "../../agents/script.mjs";
import {
  type AcpClient,
  checkedFrames,
  type Json,
  lastReply,
  type Message,
  type StreamFrame,
  streamedText,
  textOf,
  userSays,
} from "./acp.js";
import { cancelExpectation, type Flow, runsFlow, type Stack } from "./stack.js";

/** The six flows of a stack through ACP: threads, runs, streams, wait, resume and cancel. */
export function acpFlows(stack: Stack): void {
  describe(`${stack.title} through ACP`, () => {
    const flow = (name: Flow, title: string, test: () => Promise<void>) => {
      if (runsFlow(stack, name)) it(title, test);
    };
    const acp = (): AcpClient => stack.server().acp;
    const agentId = () => stack.server().agentId;

    flow("text", "streams a text reply as it is written, and the run succeeds", async () => {
      const thread = await acp().newThread();
      const frames = await acp().streamRun(thread, {
        agent_id: agentId(),
        input: { messages: [userSays("hello")] },
        stream_mode: ["values", "custom"],
      });
      expect(streamedText(frames)).toBe("You said: hello");
      const contentEvents = frames.filter((f) => f.update?.type === "TEXT_MESSAGE_CONTENT");
      expect(contentEvents.length).toBeGreaterThan(1);
      const last = frames.at(-1)!;
      expect(last).toMatchObject({ type: "values", status: "success" });
      expect(textOf(last.messages?.at(-1))).toBe("You said: hello");
      const run = await acp().ok<Json>("GET", `/threads/${thread}/runs/${last.run_id}`);
      expect(run.status).toBe("success");
    });

    flow("tool", "calls a server-side tool and answers with its result", async () => {
      const thread = await acp().newThread();
      const { run, output } = await acp().waitRun(thread, {
        agent_id: agentId(),
        input: { messages: [userSays("weather in Paris")] },
      });
      expect(run.status).toBe("success");
      const messages = output.messages ?? [];
      const call = messages.find((m) => m.toolCalls?.length)?.toolCalls?.[0];
      expect(call?.function.name).toBe("get_weather");
      expect(JSON.parse(call!.function.arguments)).toEqual({ city: "Paris" });
      const result = messages.find((m) => m.role === "tool");
      expect(result?.toolCallId).toBe(call!.id);
      expect(JSON.parse(textOf(result))).toMatchObject({ city: "Paris", forecast: "sunny" });
      expect(messages.indexOf(result!)).toBeGreaterThan(
        messages.indexOf(messages.find((m) => m.toolCalls?.length)!),
      );
      expect(lastReply(messages)).toBe("It is sunny in Paris, 21 °C.");
    });

    flow("state", "keeps the agent's state on the thread, starting from the client's", async () => {
      const thread = await acp().newThread();
      const { run, output } = await acp().waitRun(thread, {
        agent_id: agentId(),
        input: { messages: [userSays("remember milk")], state: { notes: ["from client"] } },
      });
      expect(run.status).toBe("success");
      expect(output.values).toMatchObject({ notes: ["from client", "milk"] });
      expect(textOf(output.messages?.at(-1))).toMatch(/^Noted/);
      const stored = await acp().thread(thread);
      expect(stored.values).toMatchObject({ notes: ["from client", "milk"] });
    });

    flow("history", "gives the agent the first turn in the second, on one thread", async () => {
      const thread = await acp().newThread();
      const first = await acp().waitRun(thread, {
        agent_id: agentId(),
        input: { messages: [userSays("my name is Ana")] },
      });
      expect(textOf(first.output.messages?.at(-1))).toBe("You said: my name is Ana");
      const second = await acp().waitRun(thread, {
        agent_id: agentId(),
        input: { messages: [userSays("what did I say?")] },
      });
      expect(second.run.status).toBe("success");
      const messages = second.output.messages ?? [];
      expect(textOf(messages.at(-1))).toBe("You said: my name is Ana / what did I say?");
      expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
      const history = await acp().ok<Json[]>("GET", `/threads/${thread}/history`);
      expect(history.length).toBeGreaterThanOrEqual(2);
      if (stack.upstream.threadMessages) {
        // The agent's own copy of the thread holds each turn once.
        const upstream = await stack.upstream.threadMessages(thread);
        expect(upstream.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
      }
    });

    flow(
      "interrupt",
      "stops for approval as an ACP interrupt and finishes when resumed",
      async () => {
        const thread = await acp().newThread();
        const asked = await acp().waitRun(thread, {
          agent_id: agentId(),
          input: { messages: [userSays("deploy production")] },
        });
        expect(asked.run.status).toBe("interrupted");
        expect(asked.output.type).toBe("interrupt");
        const interrupt = asked.output.interrupt?.[stack.interruptType] as Json | undefined;
        expect(interrupt, JSON.stringify(asked.output)).toBeDefined();
        expect(typeof interrupt!.id).toBe("string");
        const runPath = `/threads/${thread}/runs/${asked.run.run_id}`;
        if (stack.approvalHasSchema) {
          expect(interrupt!.responseSchema).toMatchObject({ properties: { approved: {} } });
          const wrong = await acp().call("POST", runPath, {
            [stack.interruptType]: { approved: "yes" },
          });
          expect(wrong.status).toBe(422);
          expect(String(wrong.body)).toMatch(/approved/);
        }
        await acp().ok("POST", runPath, { [stack.interruptType]: { approved: true } });
        const done = await acp().ok<{ run: { status: string }; output: { messages?: Message[] } }>(
          "GET",
          `${runPath}/wait`,
        );
        expect(done.run.status).toBe("success");
        expect(lastReply(done.output.messages)).toBe("Deployment approved.");
        // The conversation goes on after the approval, on the same thread.
        const next = await acp().waitRun(thread, {
          agent_id: agentId(),
          input: { messages: [userSays("thanks")] },
        });
        if (stack.stuckAfterInterrupt) {
          expect(next.run.status, stack.stuckAfterInterrupt.reason).toBe("error");
          expect(String(next.output.description)).toMatch(stack.stuckAfterInterrupt.error);
          return;
        }
        expect(next.run.status).toBe("success");
        expect(lastReply(next.output.messages)).toBe("You said: deploy production / thanks");
      },
    );

    const cancelled = cancelExpectation(stack, "cancels a streaming run");
    flow("cancel", cancelled.title, async () => {
      const thread = await acp().newThread();
      const stream = await acp().openStream(thread, {
        agent_id: agentId(),
        input: { messages: [userSays("tell me a long story")] },
        stream_mode: ["custom"],
      });
      expect(stream.status).toBe(200);
      let runId: string | undefined;
      for (let i = 0; !runId; i++) {
        const frame = (await stream.frame(i, 30_000)).data as StreamFrame;
        if (frame.update?.type === "TEXT_MESSAGE_CONTENT") runId = frame.run_id;
      }
      const reply = await acp().call(
        "POST",
        `/threads/${thread}/runs/${runId}/cancel?action=interrupt&wait=true`,
      );
      expect(reply.status).toBe(204);
      await stream.ended;
      const frames = checkedFrames(stream);
      expect(frames.at(-1)).toMatchObject({ type: "values", status: "error" });
      expect(streamedText(frames).length).toBeLessThan(LONG_STORY.length);
      const run = await acp().ok<Json>("GET", `/threads/${thread}/runs/${runId}`);
      expect(run.status).toBe("error");
      cancelled.check(await stack.upstream.stopSeen(thread));
    });
  });
}
