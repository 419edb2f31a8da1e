import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "../..");

export interface Cli {
  child: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Resolves with the base URL once the server listens. */
  listening: Promise<string>;
  /** The JSON log lines written so far. */
  logs(): Array<Record<string, unknown>>;
  stderr(): string;
}

const running = new Set<ChildProcess>();

/** Starts the real CLI (`node --import tsx src/cli.ts`, as `npm run dev` does). */
export function startCli(args: string[], env: Record<string, string> = {}): Cli {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk) => (stdout += chunk));
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((done) =>
    child.on("exit", (code) => {
      running.delete(child);
      done(code);
    }),
  );
  const logs = () =>
    stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const listening = new Promise<string>((done, fail) => {
    const check = () => {
      const line = logs().find((l) => l.msg === "acp-agui listening");
      if (line) done(line.url as string);
    };
    child.stdout!.on("data", check);
    void exited.then((code) => fail(new Error(`exited with ${code}: ${stderr}${stdout}`)));
  });
  listening.catch(() => undefined);
  return { child, exited, listening, logs, stderr: () => stderr };
}

/** Kills every CLI still running (after a failed test). */
export function killAll(): void {
  for (const child of running) child.kill("SIGKILL");
}

/** A temporary directory holding a config file and a database path. */
export function workspace(config: unknown): { configPath: string; db: string } {
  const dir = mkdtempSync(join(tmpdir(), "acp-crash-"));
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  return { configPath, db: join(dir, "data.db") };
}

export async function api<T = Record<string, unknown>>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Polls until `accept` holds, or fails after `timeoutMs`. */
export async function eventually<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs `tasks` with at most `width` at once. */
export async function inBatches<T>(tasks: Array<() => Promise<T>>, width: number): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < tasks.length; i += width) {
    out.push(...(await Promise.all(tasks.slice(i, i + width).map((task) => task()))));
  }
  return out;
}
