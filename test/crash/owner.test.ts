import { realpathSync } from "node:fs";
import { hostname } from "node:os";
import type { RunAgentInput } from "@ag-ui/core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { AguiTestServer, type Event, send } from "../helpers/agui-server.js";
import { api, type Cli, eventually, killAll, startCli, workspace } from "./cli.js";

// One process owns a SQLite file. A second server started on a file a live server holds must
// refuse, in one line naming the file and the owner, and leave the owner's runs alone; a file
// whose owner was killed is taken over.

afterEach(killAll);

type Run = { run_id: string; thread_id: string; status: string };
type Wait = { run: Run; output?: Record<string, unknown> };

const RUNS = 5;
const agentId = agentIdFor("held", "1.0.0");
let remote: AguiTestServer;

beforeAll(async () => {
  remote = await AguiTestServer.start();
});
afterAll(() => remote.close());

/** A remote AG-UI agent whose runs stream a first message, then wait for `released`. */
function holdRuns(count: number, released: Promise<unknown>): void {
  for (let i = 0; i < count; i++) {
    remote.reply((input: RunAgentInput) => {
      const ids = { threadId: input.threadId, runId: input.runId };
      const text = (messageId: string, delta: string): Event[] => [
        { type: "TEXT_MESSAGE_START", messageId, role: "assistant" },
        { type: "TEXT_MESSAGE_CONTENT", messageId, delta },
        { type: "TEXT_MESSAGE_END", messageId },
      ];
      return {
        stream: [
          ...send({ type: "RUN_STARTED", ...ids }, ...text("before", "started")),
          { until: released },
          ...send(...text("after", "finished"), { type: "RUN_FINISHED", ...ids }),
        ],
      };
    });
  }
}

function setUp(): { args: string[]; db: string } {
  const { configPath, db } = workspace({
    server: { keepAliveSeconds: 0 },
    agents: [
      {
        name: "held",
        version: "1.0.0",
        description: "a remote agent the test holds open",
        adapter: { type: "agui-http", url: remote.url },
      },
    ],
  });
  return { args: ["serve", "--config", configPath, "--port", "0", "--db", db], db };
}

async function startRuns(base: string, count: number): Promise<Run[]> {
  const runs: Run[] = [];
  for (let i = 0; i < count; i++) {
    const thread = await api<{ thread_id: string }>(base, "POST", "/threads", {});
    const run = await api<Run>(base, "POST", `/threads/${thread.body.thread_id}/runs`, {
      agent_id: agentId,
      input: { messages: [{ role: "user", content: `run ${i}` }] },
    });
    expect(run.status).toBe(200);
    runs.push(run.body);
  }
  return runs;
}

/** The refusal: exactly one line on stderr naming the file, the owner's pid and its host. */
async function expectRefused(cli: Cli, db: string, ownerPid: number): Promise<void> {
  expect(await cli.exited).toBe(1);
  const lines = cli.stderr().trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  const file = realpathSync(db).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  expect(lines[0]).toMatch(
    new RegExp(
      `^acp-agui: database file ${file} is in use by another process \\(pid ${ownerPid} on host ${hostname()}, since [^)]+\\): one server owns a SQLite file; stop that one or give this one another database file$`,
    ),
  );
  expect(cli.logs().map((line) => line.msg)).not.toContain("run engine started");
}

describe("one server per SQLite file", () => {
  it("a second server on a busy database file refuses in one line, and the first finishes its runs", async () => {
    const { args, db } = setUp();
    let release!: () => void;
    holdRuns(RUNS, new Promise<void>((resolve) => (release = resolve)));
    const first = startCli(args);
    const base = await first.listening;
    const runs = await startRuns(base, RUNS);
    await eventually(
      async () => remote.requests.length,
      (n) => n >= RUNS,
      10_000,
      "every run to reach the remote agent",
    );

    const second = startCli(args);
    await expectRefused(second, db, first.child.pid!);

    // The first server is untouched: its runs go on and finish.
    release();
    for (const run of runs) {
      const waited = await api<Wait>(
        base,
        "GET",
        `/threads/${run.thread_id}/runs/${run.run_id}/wait`,
      );
      expect(waited.body.run.status).toBe("success");
      expect(waited.body.output).toMatchObject({
        type: "result",
        messages: expect.arrayContaining([expect.objectContaining({ content: "finished" })]),
      });
    }
    const messages = first.logs().map((line) => line.msg);
    expect(messages).not.toContain("took back runs of a previous process");
    expect(messages).not.toContain("failed a run whose executor died");
    expect(first.child.exitCode).toBeNull();

    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
  }, 60_000);

  it("a file whose owner was killed (SIGKILL) is taken over, and the new owner holds it", async () => {
    const { args, db } = setUp();
    holdRuns(1, new Promise(() => {}));
    const first = startCli(args);
    const [run] = await startRuns(await first.listening, 1);
    await eventually(
      async () => remote.requests.at(-1)?.input.messages.at(-1)?.content,
      (content) => content === "run 0",
      10_000,
      "the run to reach the remote agent",
    );
    first.child.kill("SIGKILL");
    expect(await first.exited).toBeNull();

    const second = startCli(args);
    const base = await second.listening;
    expect(second.logs().map((line) => line.msg)).toContain("took back runs of a previous process");
    const waited = await api<Wait>(
      base,
      "GET",
      `/threads/${run!.thread_id}/runs/${run!.run_id}/wait`,
    );
    expect(waited.body.run.status).toBe("error");
    expect(waited.body.output).toMatchObject({ errcode: 503 });

    // The file is the second server's now: a third is refused, naming it.
    const third = startCli(args);
    await expectRefused(third, db, second.child.pid!);

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  }, 60_000);
});
