import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fullCustom } from "../../src/engine/frames/codec.js";
import type { TestApp } from "../helpers/app.js";
import {
  agentId,
  buildWith,
  type Event,
  finished,
  type Json,
  newThread,
  post,
  say,
  settledRun,
  snapshot,
  started,
  userSays,
} from "./helpers.js";

type Run = { run_id: string; status: string; thread_id?: string };
type Wait = { run: Run; output: Json };

const approval = { id: "appr-1", reason: "approval", message: "Ship it?" };
const question = { id: "ask-1", reason: "input", message: "Which branch?" };
const interruptWith = (...interrupts: Json[]): Event =>
  finished({ outcome: { type: "interrupt", interrupts } });

const approvedSchema = {
  type: "object",
  required: ["approved"],
  properties: { approved: { type: "boolean" } },
};

describe("interrupts and resume", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildWith([
      {
        name: "gate",
        segments: [
          [started, snapshot({ phase: "asked" }), interruptWith(approval)],
          [started, ...say("m-done", "shipped"), snapshot({ phase: "done" }), finished()],
        ],
        specs: { resume_payload: approvedSchema },
      },
      {
        name: "two-questions",
        segments: [
          [started, interruptWith(approval, question)],
          [started, finished()],
        ],
      },
      {
        name: "twice",
        segments: [
          [started, interruptWith(approval, { ...approval, id: "appr-2", message: "Really?" })],
          [started, finished()],
        ],
      },
      { name: "echo", echo: true },
      {
        // As Mastra's suspended tool: the interrupt says what answer it wants.
        name: "asks-for-schema",
        segments: [
          [started, interruptWith({ ...approval, id: "tool-1", responseSchema: approvedSchema })],
          [started, finished()],
        ],
      },
      {
        name: "bad-schema",
        segments: [
          [
            started,
            interruptWith({
              ...approval,
              id: "tool-2",
              responseSchema: {
                type: "object",
                properties: { answer: { type: "string", pattern: "^(a+)+$" } },
              },
            }),
          ],
          [started, finished()],
        ],
      },
    ]);
  });
  afterAll(() => t.close());

  async function interrupted(agent: string, threadId?: string) {
    const thread = threadId ?? (await newThread(t));
    const wait = (await post(t, `/threads/${thread}/runs/wait`, {
      agent_id: agentId(agent),
      input: userSays("please"),
    })) as unknown as Wait;
    expect(wait.run.status).toBe("interrupted");
    return { threadId: thread, runId: wait.run.run_id, output: wait.output };
  }

  const resume = (threadId: string, runId: string, body: unknown) =>
    t.call("POST", `/threads/${threadId}/runs/${runId}`, body);

  /** The AG-UI runIds of the run's RUN_STARTED events, from its stored custom frames. */
  async function aguiRunIds(runId: string): Promise<string[]> {
    const frames = await t.storage.readFrames(runId, 0);
    return frames
      .filter((f) => f.mode === "custom")
      .map((f) => JSON.parse(fullCustom(f).data) as { run_id: string; update: Json })
      .filter((d) => d.update.type === "RUN_STARTED")
      .map((d) => {
        expect(d.run_id).toBe(runId);
        return d.update.runId as string;
      });
  }

  it("GET /threads/{id}/runs/{run_id}/wait › an interrupted run's wait returns the interrupt output", async () => {
    const { threadId, runId, output } = await interrupted("gate");
    expect(output).toEqual({ type: "interrupt", interrupt: { approval } });
    const again = await t.call("GET", `/threads/${threadId}/runs/${runId}/wait`);
    expect(again.status).toBe(200);
    expect((again.body as Wait).output).toEqual(output);
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
    expect(thread).toMatchObject({ status: "interrupted", values: { phase: "asked" } });
  });

  it("POST /threads/{id}/runs/{run_id} › resumes with a payload keyed by interrupt type, same run_id, new AG-UI run", async () => {
    const { threadId, runId } = await interrupted("gate");
    const res = await resume(threadId, runId, { approval: { approved: true } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ run_id: runId, status: "pending" });

    const done = await settledRun(t, runId);
    expect(done.status).toBe("success");
    expect(done.segments).toHaveLength(2);
    const ids = await aguiRunIds(runId);
    expect(ids).toEqual(done.segments.map((s) => s.agui_run_id));
    expect(new Set(ids).size).toBe(2);
    expect(ids).not.toContain(runId);

    const wait = (await t.call("GET", `/threads/${threadId}/runs/${runId}/wait`)).body as Wait;
    expect(wait.output).toMatchObject({ type: "result", values: { phase: "done" } });
    expect((wait.output.messages as Json[]).at(-1)).toEqual({
      id: "m-done",
      role: "assistant",
      content: "shipped",
    });
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
    expect(thread.status).toBe("idle");
  });

  it("POST /threads/{id}/runs/{run_id} › accepts the native AG-UI resume list", async () => {
    const { threadId, runId } = await interrupted("gate");
    const res = await resume(threadId, runId, {
      resume: [{ interruptId: "appr-1", status: "resolved", payload: { approved: false } }],
    });
    expect(res.status).toBe(200);
    expect((await settledRun(t, runId)).status).toBe("success");
  });

  it("POST /threads/{id}/runs/{run_id} › 422 when an open interrupt is not answered", async () => {
    const { threadId, runId } = await interrupted("two-questions");
    const keyed = await resume(threadId, runId, { approval: { ok: 1 } });
    expect(keyed.status).toBe(422);
    expect(keyed.body).toBe(
      'resume must answer every open interrupt: missing "input" (open: "approval", "input")',
    );
    const native = await resume(threadId, runId, {
      resume: [{ interruptId: "ask-1", status: "resolved", payload: { branch: "main" } }],
    });
    expect(native.status).toBe(422);
    expect(native.body).toBe('resume must answer every open interrupt: missing "appr-1"');
    const unknown = await resume(threadId, runId, {
      resume: [
        { interruptId: "appr-1", status: "resolved", payload: {} },
        { interruptId: "nope", status: "cancelled" },
      ],
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toBe('resume[1].interruptId "nope" is not an open interrupt of this run');
    // Still interrupted and resumable after the refusals.
    expect((await t.storage.getRun(runId))?.status).toBe("interrupted");
    const ok = await resume(threadId, runId, { approval: {}, input: { branch: "main" } });
    expect(ok.status).toBe(200);
    expect((await settledRun(t, runId)).status).toBe("success");
  });

  it("POST /threads/{id}/runs/{run_id} › 422 naming the property the resume_payload schema requires", async () => {
    const { threadId, runId } = await interrupted("gate");
    const keyed = await resume(threadId, runId, { approval: { yes: true } });
    expect(keyed.status).toBe(422);
    expect(keyed.body).toMatch(/^resume\.approval: /);
    expect(keyed.body).toMatch(/approved/);
    const wrongType = await resume(threadId, runId, { approval: { approved: "yes" } });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body).toMatch(/approved/);
    const native = await resume(threadId, runId, {
      resume: [{ interruptId: "appr-1", status: "resolved", payload: {} }],
    });
    expect(native.status).toBe(422);
    expect(native.body).toMatch(/^resume\[0\]\.payload: .*approved/);
    const badEntry = await resume(threadId, runId, {
      resume: [{ interruptId: "appr-1", status: "maybe" }],
    });
    expect(badEntry.status).toBe(422);
    expect(badEntry.body).toMatch(/^resume\[0\]: .*status/);
  });

  it("POST /threads/{id}/runs/{run_id} › 422 naming the path the interrupt's own responseSchema refuses", async () => {
    const { threadId, runId } = await interrupted("asks-for-schema");
    const keyed = await resume(threadId, runId, { approval: { approved: "yes" } });
    expect(keyed.status).toBe(422);
    expect(keyed.body).toBe(
      "resume.approval: approval/approved must be boolean (the interrupt's responseSchema)",
    );
    const native = await resume(threadId, runId, {
      resume: [{ interruptId: "tool-1", status: "resolved", payload: { approved: "yes" } }],
    });
    expect(native.status).toBe(422);
    expect(native.body).toBe(
      "resume[0].payload: approval/approved must be boolean (the interrupt's responseSchema)",
    );
    expect((await t.storage.getRun(runId))?.status).toBe("interrupted");
    const ok = await resume(threadId, runId, { approval: { approved: true } });
    expect(ok.status).toBe(200);
    expect((await settledRun(t, runId)).status).toBe("success");
  });

  it("POST /threads/{id}/runs/{run_id} › a responseSchema that cannot be used leaves the payload to the descriptor", async () => {
    const { threadId, runId } = await interrupted("bad-schema");
    // A string that pattern would take minutes to refuse: it is never run.
    const res = await resume(threadId, runId, { approval: { answer: `${"a".repeat(40)}!` } });
    expect(res.status).toBe(200);
    expect((await settledRun(t, runId)).status).toBe("success");
  });

  it("the AG-UI face's resume › 422 naming the path the interrupt's responseSchema refuses", async () => {
    const { threadId } = await interrupted("asks-for-schema");
    const face = (payload: unknown) =>
      t.app.inject({
        method: "POST",
        url: `/agents/${agentId("asks-for-schema")}/ag-ui`,
        payload: {
          threadId,
          runId: "face-resume",
          messages: [],
          tools: [],
          context: [],
          resume: [{ interruptId: "tool-1", status: "resolved", payload }],
        },
      });
    const refused = await face({ approved: "yes" });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toBe(
      "resume[0].payload: approval/approved must be boolean (the interrupt's responseSchema)",
    );
    const accepted = await face({ approved: true });
    expect(accepted.statusCode).toBe(200);
    expect(accepted.body).toContain('"type":"RUN_FINISHED"');
  });

  it("POST /threads/{id}/runs/{run_id} › several interrupts of one type arrive as an array and are answered in order", async () => {
    const { threadId, runId, output } = await interrupted("twice");
    const interrupt = output.interrupt as Json;
    expect((interrupt.approval as Json[]).map((i) => i.id)).toEqual(["appr-1", "appr-2"]);
    const single = await resume(threadId, runId, { approval: { ok: true } });
    expect(single.status).toBe(422);
    expect(single.body).toMatch(/resume\.approval must be an array of 2 payloads/);
    const ok = await resume(threadId, runId, { approval: [{ ok: 1 }, { ok: 2 }] });
    expect(ok.status).toBe(200);
    expect((await settledRun(t, runId)).status).toBe("success");
  });

  it("POST /threads/{id}/runs/{run_id} › 409 when the run is not interrupted, 404 when unknown", async () => {
    const threadId = await newThread(t);
    const wait = (await post(t, `/threads/${threadId}/runs/wait`, {
      agent_id: agentId("echo"),
      input: userSays("hello"),
    })) as unknown as Wait;
    expect(wait.run.status).toBe("success");
    const res = await resume(threadId, wait.run.run_id, { approval: {} });
    expect(res.status).toBe(409);
    expect(res.body).toBe(
      `run ${wait.run.run_id} is success, not interrupted: only an interrupted run can be resumed`,
    );
    const unknown = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";
    expect((await resume(threadId, unknown, { approval: {} })).status).toBe(404);
  });

  it("echo agent › '/approve do it' interrupts for approval; the resume finishes mentioning the payload", async () => {
    const threadId = await newThread(t);
    const first = (await post(t, `/threads/${threadId}/runs/wait`, {
      agent_id: agentId("echo"),
      input: userSays("/approve do it"),
    })) as unknown as Wait;
    expect(first.run.status).toBe("interrupted");
    const asked = (first.output.interrupt as { approval: Json }).approval;
    expect(asked).toMatchObject({ reason: "approval", message: 'Approve echoing "do it"?' });

    const res = await resume(threadId, first.run.run_id, { approval: { approved: true } });
    expect(res.status).toBe(200);
    const done = (await t.call("GET", `/threads/${threadId}/runs/${first.run.run_id}/wait`))
      .body as Wait;
    expect(done.run.status).toBe("success");
    const last = (done.output.messages as Json[]).at(-1)!;
    expect(last).toMatchObject({
      role: "assistant",
      content: 'Approved with {"approved":true}: do it',
    });
    expect(done.output.result).toEqual({ echoed: 'Approved with {"approved":true}: do it' });
  });

  it("POST /runs/{run_id} › a stateless interrupted run keeps its thread until resumed to the end", async () => {
    const created = (await post(t, "/runs/wait", {
      agent_id: agentId("gate"),
      input: userSays("go"),
    })) as unknown as Wait;
    expect(created.run.status).toBe("interrupted");
    const hidden = created.run.thread_id!;
    expect(await t.storage.getThread(hidden)).not.toBeNull();
    const res = await t.call("POST", `/runs/${created.run.run_id}`, {
      approval: { approved: true },
    });
    expect(res.status).toBe(200);
    const done = (await t.call("GET", `/runs/${created.run.run_id}/wait`)).body as Wait;
    expect(done.run.status).toBe("success");
    expect(done.output).toMatchObject({ values: { phase: "done" } });
    expect(await t.storage.getThread(hidden)).toBeNull();
  });
});
