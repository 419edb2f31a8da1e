import { mkdtempSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import type { ServerSettings } from "../../src/config/settings.js";
import type { Storage } from "../../src/storage/types.js";
import { type BuildOptions, build, type TestApp } from "../helpers/app.js";

export type Event = Record<string, unknown> & { type: string };
export type Json = Record<string, unknown>;

export interface AgentSpec {
  name: string;
  /** One script per segment (first start, then each resume). */
  segments?: Event[][];
  script?: Event[];
  delayMs?: number;
  echo?: boolean;
  limits?: Json;
  specs?: Json;
  retryOnRestart?: boolean;
  /** The agent's `events` options, e.g. `{dropRaw: true}`. */
  events?: Json;
}

/** A config file (JSON is YAML) with scripted or echo agents, all at version 1.0.0. */
export function configOf(agents: AgentSpec[]): string {
  return JSON.stringify({
    agents: agents.map((agent) => ({
      name: agent.name,
      version: "1.0.0",
      description: `test agent ${agent.name}`,
      adapter: agent.echo
        ? { type: "echo", ...(agent.delayMs ? { delayMs: agent.delayMs } : {}) }
        : {
            type: "scripted",
            ...(agent.segments ? { segments: agent.segments } : { script: agent.script }),
            ...(agent.delayMs ? { delayMs: agent.delayMs } : {}),
          },
      ...(agent.limits ? { limits: agent.limits } : {}),
      ...(agent.specs ? { specs: agent.specs } : {}),
      ...(agent.retryOnRestart ? { retryOnRestart: true } : {}),
      ...(agent.events ? { events: agent.events } : {}),
    })),
  });
}

export const agentId = (name: string) => agentIdFor(name, "1.0.0");

export interface BuildRunsOptions {
  settings?: Partial<ServerSettings>;
  storage?: Storage;
  resolveWebhookHost?: BuildOptions["resolveWebhookHost"];
}

export function buildWith(agents: AgentSpec[], options: BuildRunsOptions = {}): Promise<TestApp> {
  return build({ yaml: configOf(agents), ...options });
}

/** The scripted adapter rewrites these ids to the live ones. */
export const started: Event = { type: "RUN_STARTED", threadId: "t", runId: "r" };
export const finished = (extra: Json = {}): Event => ({
  type: "RUN_FINISHED",
  threadId: "t",
  runId: "r",
  ...extra,
});

/** A short assistant reply as three events. */
export function say(id: string, text: string): Event[] {
  return [
    { type: "TEXT_MESSAGE_START", messageId: id, role: "assistant" },
    { type: "TEXT_MESSAGE_CONTENT", messageId: id, delta: text },
    { type: "TEXT_MESSAGE_END", messageId: id },
  ];
}

export const snapshot = (state: unknown): Event => ({ type: "STATE_SNAPSHOT", snapshot: state });

/** A script that runs for about `steps × delayMs` before finishing. */
export function slowScript(steps: number, final: Json = { done: true }): Event[] {
  const events: Event[] = [started];
  for (let i = 0; i < steps; i++) {
    events.push({ type: "STEP_STARTED", stepName: `s${i}` });
    events.push({ type: "STEP_FINISHED", stepName: `s${i}` });
  }
  events.push(snapshot(final), finished());
  return events;
}

/** Polls `read` until `accept` holds, or fails after `timeoutMs`. */
export async function until<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 5_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Waits for the stored run to reach a status other than `pending` (or the one given). */
export async function settledRun(t: TestApp, runId: string, status?: string, timeoutMs = 5_000) {
  const run = await until(
    () => t.storage.getRun(runId),
    (r) => r !== null && (status === undefined ? r.status !== "pending" : r.status === status),
    timeoutMs,
    `run ${runId} to reach ${status ?? "a final status"}`,
  );
  return run!;
}

/** Waits until the engine has started a segment of the run (it is executing). */
export function runStarted(t: TestApp, runId: string, segments = 1) {
  return until(
    () => t.storage.getRun(runId),
    (r) => (r?.segments.length ?? 0) >= segments,
    5_000,
    `run ${runId} to start`,
  );
}

/** Waits until the run has stored at least `frames` frames. */
export function framesStored(t: TestApp, runId: string, frames: number) {
  return until(
    () => t.storage.getRun(runId),
    (r) => (r?.last_seq ?? 0) >= frames,
    5_000,
    `run ${runId} to store ${frames} frames`,
  );
}

export async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  const address = t.app.server.address() as AddressInfo;
  return `http://127.0.0.1:${address.port}`;
}

export function tempDbFile(): string {
  return join(mkdtempSync(join(tmpdir(), "acp-agui-runs-")), "data.db");
}

export async function post(t: TestApp, url: string, body: unknown = {}) {
  const res = await t.call("POST", url, body);
  expect(res.status, `POST ${url}: ${res.raw}`).toBe(200);
  return res.body as Json;
}

export async function newThread(t: TestApp, metadata: Json = {}): Promise<string> {
  return (await post(t, "/threads", { metadata })).thread_id as string;
}

export const userSays = (content: string) => ({ messages: [{ role: "user", content }] });

/** A script that advances `progress` once per step (a snapshot and a step checkpoint each). */
export function progressScript(steps: number): Event[] {
  const events: Event[] = [started];
  for (let i = 1; i <= steps; i++) {
    events.push({ type: "STEP_STARTED", stepName: `step-${i}` });
    events.push(snapshot({ progress: i }));
    events.push({ type: "STEP_FINISHED", stepName: `step-${i}` });
  }
  events.push(finished());
  return events;
}
