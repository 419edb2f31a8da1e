import { afterEach, describe, expect, it } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { openSse } from "../helpers/sse.js";
import { progressScript } from "../runs/helpers.js";
import { api, eventually, killAll, startCli, workspace } from "./cli.js";

afterEach(killAll);

const agent = (name: string, steps: number, delayMs: number) => ({
  name,
  version: "1.0.0",
  description: `${steps} steps`,
  adapter: { type: "scripted", script: progressScript(steps), delayMs },
  limits: { runTimeoutSeconds: 0 },
});
const config = {
  server: { keepAliveSeconds: 0 },
  // long: ~6 s, beyond the grace period; short: ~0.85 s, well within it (a busy machine makes
  // each of its 26 events a little late).
  agents: [agent("long", 60, 33), agent("short", 8, 33)],
};
const id = (name: string) => agentIdFor(name, "1.0.0");
type Final = { status: string; output?: { errcode?: number; description?: string } };

describe("SIGTERM", () => {
  it("stops accepting, lets runs finish within the grace period, ends open streams with a final frame, then exits 0", async () => {
    const { configPath, db } = workspace(config);
    const args = ["serve", "--config", configPath, "--port", "0", "--db", db, "--grace", "2"];
    const cli = startCli(args);
    const base = await cli.listening;

    const long = await openSse(base, "/runs/stream", {
      body: { agent_id: id("long"), input: {}, on_completion: "keep" },
    });
    await long.frame(1);
    const queued = (
      await api<{ run_id: string }>(base, "POST", "/runs", {
        agent_id: id("short"),
        input: {},
        after_seconds: 600,
        on_completion: "keep",
      })
    ).body;
    const joined = await openSse(base, `/runs/${queued.run_id}/stream`);
    const waiting = fetch(`${base}/runs/${queued.run_id}/wait`).then(
      (res) => res.status,
      () => "dropped",
    );
    const short = await openSse(base, "/runs/stream", {
      body: { agent_id: id("short"), input: {}, on_completion: "keep" },
    });
    await short.frame(1);

    const signalled = Date.now();
    cli.child.kill("SIGTERM");
    await eventually(
      async () => cli.logs().some((l) => l.msg === "shutting down"),
      (seen) => seen,
      5_000,
      "the shutdown to begin",
    );
    // No new connections once shutdown began.
    // A kept-alive connection still gets an answer: 503, as an ACP string error.
    const refused = await fetch(`${base}/healthz`).then(
      async (res) => `${res.status} ${await res.text()}`,
      () => "refused",
    );
    expect(["refused", '503 "the server is shutting down"']).toContain(refused);

    await Promise.all([long.ended, short.ended, joined.ended]);
    const finalOf = (frames: typeof long.frames) => frames.at(-1)!.data as Final;
    // Finished within the grace period: success.
    expect(finalOf(short.frames).status).toBe("success");
    // Cut at the end of the grace period: its final frame says so, and reached the client.
    expect(finalOf(long.frames)).toMatchObject({
      status: "error",
      output: { errcode: 503, description: "the server shut down while the run was executing" },
    });
    // A stream on a run still queued ends without a final frame: the run waits for the next start.
    expect(joined.frames).toHaveLength(0);
    expect(await waiting).toBe("dropped");

    expect(await cli.exited).toBe(0);
    const took = Date.now() - signalled;
    expect(took).toBeGreaterThanOrEqual(1_900);
    expect(took).toBeLessThan(6_000);

    // The next start finds everything where shutdown left it.
    const next = startCli(args);
    const base2 = await next.listening;
    const runOf = async (runId: string) =>
      (await api<{ status: string }>(base2, "GET", `/runs/${runId}`)).body.status;
    expect(await runOf(queued.run_id)).toBe("pending");
    const longRunId = (long.frames[0]!.data as { run_id: string }).run_id;
    expect(await runOf(longRunId)).toBe("error");
    next.child.kill("SIGTERM");
    expect(await next.exited).toBe(0);
  }, 30_000);
});
