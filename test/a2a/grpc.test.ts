/**
 * A2A's gRPC binding with the official client (`@a2a-js/sdk`'s gRPC transport, chosen from the
 * card): every operation of `lf.a2a.v1.A2AService` on the same tasks as the other bindings, a
 * file sent to an agent and a file artifact received from one, an `input-required` task
 * answered with text, and the errors as gRPC status codes with a `google.rpc.Status` whose
 * ErrorInfo gives A2A's reason.
 */
import { randomUUID } from "node:crypto";
import {
  ListTaskPushNotificationConfigsRequest,
  ListTasksRequest,
  Message,
  type Part,
  TaskPushNotificationConfig,
  TaskState,
} from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { decodeErrorInfo, decodeStatus } from "@a2a-js/sdk/errors/grpc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { grpcClient, grpcOn } from "./grpc-helpers.js";
import { asTask, collect, responseText, userMessage } from "./helpers.js";
import { ofTask, receiver, stateOf, until } from "./push-helpers.js";

const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message.
    adapter: { type: echo }
  - name: slow
    version: 1.0.0
    description: Echo that takes its time.
    adapter: { type: echo, delayMs: 60 }
  - name: media
    version: 1.0.0
    description: Describes the files it gets; draws a chart; asks a question.
    adapter: { type: module, path: ./media-agent.mjs }
  - name: talker
    version: 1.0.0
    description: Replies with messages.
    adapter: { type: module, path: ./media-agent.mjs }
    a2a: { reply: message }
`;

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

/** A part as the client reads it, back in ProtoJSON. */
function partJson(part: Part): Record<string, unknown> {
  const { content, filename, mediaType } = part;
  const out: Record<string, unknown> = {};
  if (content?.$case === "raw") out.raw = Buffer.from(content.value).toString("base64");
  else if (content) out[content.$case] = content.value;
  if (filename) out.filename = filename;
  if (mediaType) out.mediaType = mediaType;
  return out;
}

/** The gRPC status a call failed with, and the ErrorInfo of its google.rpc.Status. */
async function refusal(call: Promise<unknown>) {
  const err = (await call.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: unknown) => e,
  )) as { status: number; message: string; statusDetailsBin?: Buffer };
  const details = err.statusDetailsBin ? decodeStatus(err.statusDetailsBin) : undefined;
  const info = details?.details[0] ? decodeErrorInfo(details.details[0].value) : undefined;
  return { status: err.status, message: err.message, details, info };
}

describe("A2A over gRPC", () => {
  let t: TestApp;
  let base: string;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  let echo: Client;
  let slow: Client;
  beforeAll(async () => {
    hooks = await receiver();
    t = await build({
      yaml: YAML,
      unchecked: true,
      baseDir: `${process.cwd()}/test/fixtures/modules`,
      settings: {
        ...grpcOn(),
        webhooks: { ...DEFAULT_SETTINGS.webhooks, allowPrivateTargets: true, maxAttempts: 3 },
      },
    });
    base = await listen(t);
    echo = await grpcClient(base, "echo");
    slow = await grpcClient(base, "slow");
  });
  afterAll(async () => {
    await t?.close();
    await hooks?.close();
  });

  it("is declared in each card as GRPC, its address and the agent as tenant", async () => {
    const card = (await (await fetch(`${base}/a2a/echo/.well-known/agent-card.json`)).json()) as {
      supportedInterfaces: Record<string, string>[];
    };
    const grpc = card.supportedInterfaces.filter((i) => i.protocolBinding === "GRPC");
    expect(grpc).toEqual([
      {
        url: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
        protocolBinding: "GRPC",
        protocolVersion: "1.0",
        tenant: "echo",
      },
    ]);
    expect(grpc[0]!.url).not.toBe(base.slice("http://".length));
  });

  it("SendMessage: answers the task once it ends", async () => {
    const task = asTask(await echo.sendMessage({ message: userMessage("hello grpc") } as never));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(responseText(task)).toBe("hello grpc");
    // The same task over HTTP+JSON: one set of tasks, whichever the binding.
    const rest = (await (await fetch(`${base}/a2a/echo/tasks/${task.id}`)).json()) as {
      id: string;
      status: { state: string };
    };
    expect(rest).toMatchObject({ id: task.id, status: { state: "TASK_STATE_COMPLETED" } });
  });

  it("SendStreamingMessage: the task, its chunks, its final status, as a server stream", async () => {
    const events = await collect(
      echo.sendMessageStream({ message: userMessage("a b c") } as never),
    );
    expect(events[0]?.payload?.$case).toBe("task");
    const chunks = events.flatMap((e) =>
      e.payload?.$case === "artifactUpdate" ? (e.payload.value.artifact?.parts ?? []) : [],
    );
    expect(chunks.map((p) => partJson(p).text).join("")).toBe("a b c");
    const last = events.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );
  });

  it("GetTask and ListTasks: the task with its history, the context's tasks", async () => {
    const first = asTask(await echo.sendMessage({ message: userMessage("one") } as never));
    const second = asTask(
      await echo.sendMessage({
        message: userMessage("two", { contextId: first.contextId }),
      } as never),
    );
    const got = await echo.getTask({ id: second.id, historyLength: 1 } as never);
    expect(got.id).toBe(second.id);
    expect(got.history).toHaveLength(1);
    // The SDK's gRPC transport encodes its own objects: requests made as the SDK makes them.
    const listed = await echo.listTasks(ListTasksRequest.fromJSON({ contextId: first.contextId }));
    expect(listed.tasks.map((task) => task.id).sort()).toEqual([first.id, second.id].sort());
    const done = await echo.listTasks(
      ListTasksRequest.fromJSON({
        contextId: first.contextId,
        status: "TASK_STATE_COMPLETED",
        pageSize: 1,
      }),
    );
    expect(done.tasks).toHaveLength(1);
    expect(done.nextPageToken).not.toBe("");
  });

  it("CancelTask: a running task is canceled; a second cancel is FAILED_PRECONDITION", async () => {
    const sent = asTask(
      await slow.sendMessage({
        message: userMessage(words(200)),
        configuration: { returnImmediately: true },
      } as never),
    );
    const canceled = await slow.cancelTask({ id: sent.id } as never);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const again = await refusal(slow.cancelTask({ id: sent.id } as never));
    expect(again.status).toBe(9);
    expect(again.info).toMatchObject({ reason: "TASK_NOT_CANCELABLE", domain: "a2a-protocol.org" });
  });

  it("SubscribeToTask: the task as it is, then its events to the end", async () => {
    const sent = asTask(
      await slow.sendMessage({
        message: userMessage(words(10)),
        configuration: { returnImmediately: true },
      } as never),
    );
    await until(
      async () => (await slow.getTask({ id: sent.id } as never)).artifacts.length > 0,
      "the first words",
    );
    const events = await collect(slow.resubscribeTask({ id: sent.id } as never));
    expect(events[0]?.payload?.$case).toBe("task");
    const last = events.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );
    const ended = await refusal(collect(slow.resubscribeTask({ id: sent.id } as never)));
    expect(ended.status).toBe(9);
    expect(ended.info?.reason).toBe("UNSUPPORTED_OPERATION");
  });

  it("push notification configs: created, read, listed, deleted", async () => {
    const sent = asTask(
      await slow.sendMessage({
        message: userMessage("configs"),
        configuration: { returnImmediately: true },
      } as never),
    );
    const created = await slow.createTaskPushNotificationConfig(
      TaskPushNotificationConfig.fromJSON({ taskId: sent.id, id: "cfg-1", url: hooks.url }),
    );
    expect(created).toMatchObject({ id: "cfg-1", taskId: sent.id, url: hooks.url });
    const read = await slow.getTaskPushNotificationConfig({
      taskId: sent.id,
      id: "cfg-1",
    } as never);
    expect(read.url).toBe(hooks.url);
    const listOf = (taskId: string) =>
      slow.listTaskPushNotificationConfig(
        ListTaskPushNotificationConfigsRequest.fromJSON({ taskId }),
      );
    const listed = await listOf(sent.id);
    expect(listed.configs.map((c) => c.id)).toEqual(["cfg-1"]);
    await slow.deleteTaskPushNotificationConfig({ taskId: sent.id, id: "cfg-1" } as never);
    // Deleting is idempotent, as on the other bindings.
    await slow.deleteTaskPushNotificationConfig({ taskId: sent.id, id: "cfg-1" } as never);
    const gone = await refusal(
      slow.getTaskPushNotificationConfig({ taskId: sent.id, id: "cfg-1" } as never),
    );
    expect(gone.status).toBe(5);
    const listedAfter = await listOf(sent.id);
    expect(listedAfter.configs).toEqual([]);
  });

  it("pushes a task's events to the config sent with its message", async () => {
    const sent = asTask(
      await echo.sendMessage({
        message: userMessage("push me"),
        configuration: {
          returnImmediately: true,
          taskPushNotificationConfig: TaskPushNotificationConfig.fromJSON({
            url: hooks.url,
            token: "tok-grpc",
          }),
        },
      } as never),
    );
    await until(
      () => ofTask(hooks.received, sent.id).some((r) => stateOf(r) === "TASK_STATE_COMPLETED"),
      "the completed status to be pushed",
    );
    const pushed = ofTask(hooks.received, sent.id);
    expect(pushed.every((r) => r.headers["x-a2a-notification-token"] === "tok-grpc")).toBe(true);
  });

  it("hands a client's file parts to the agent and gives a tool's file back as an artifact", async () => {
    const media = await grpcClient(base, "media");
    const sent = asTask(
      await media.sendMessage({
        message: Message.fromJSON({
          messageId: randomUUID(),
          role: "ROLE_USER",
          parts: [
            { text: "look" },
            { raw: PNG_BASE64, mediaType: "image/png", filename: "photo.png" },
          ],
        }),
      } as never),
    );
    expect(sent.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(responseText(sent)).toContain("got image image/png photo.png data 70 bytes");
    expect(sent.history[0]?.parts.map(partJson)).toEqual([
      { text: "look" },
      { raw: PNG_BASE64, mediaType: "image/png", filename: "photo.png" },
    ]);

    const events = await collect(
      media.sendMessageStream({ message: userMessage("picture") } as never),
    );
    const tool = events.flatMap((event) =>
      event.payload?.$case === "artifactUpdate" &&
      event.payload.value.artifact?.artifactId.startsWith("tool-")
        ? [event.payload.value.artifact]
        : [],
    );
    expect(tool).toHaveLength(1);
    const file = { raw: PNG_BASE64, mediaType: "image/png", filename: "chart.png" };
    expect(tool[0]!.parts.map(partJson)).toContainEqual(file);
    const taskId = events[0]?.payload?.$case === "task" ? events[0].payload.value.id : "";
    const stored = (await media.getTask({ id: taskId } as never)).artifacts.find((a) =>
      a.artifactId.startsWith("tool-"),
    );
    expect(stored?.parts.map(partJson)).toContainEqual(file);
  });

  it("resumes an input-required task with a plain text answer", async () => {
    const media = await grpcClient(base, "media");
    const asked = asTask(await media.sendMessage({ message: userMessage("ask") } as never));
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const done = asTask(
      await media.sendMessage({ message: userMessage("Ada", { taskId: asked.id }) } as never),
    );
    expect(done.id).toBe(asked.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(responseText(done)).toBe('answer: {"text":"Ada"}');
  });

  it("answers with a Message for an agent that replies with messages", async () => {
    const talker = await grpcClient(base, "talker");
    const answer = await talker.sendMessage({ message: userMessage("hi there") } as never);
    expect("messageId" in answer && answer.parts.map(partJson)).toEqual([{ text: "hi there" }]);
    const events = await collect(
      talker.sendMessageStream({ message: userMessage("stream hi") } as never),
    );
    expect(events.map((e) => e.payload?.$case)).toEqual(["message"]);
  });

  it("answers NOT_FOUND with TASK_NOT_FOUND for a task that is not there", async () => {
    const id = randomUUID();
    const missing = await refusal(echo.getTask({ id } as never));
    expect(missing.status).toBe(5);
    expect(missing.details?.code).toBe(5);
    expect(missing.info).toEqual({
      reason: "TASK_NOT_FOUND",
      domain: "a2a-protocol.org",
      metadata: { taskId: id },
    });
    // A task of another agent is not this agent's.
    const task = asTask(await echo.sendMessage({ message: userMessage("mine") } as never));
    expect((await refusal(slow.getTask({ id: task.id } as never))).status).toBe(5);
    expect((await refusal(slow.cancelTask({ id: task.id } as never))).status).toBe(5);
  });
});
