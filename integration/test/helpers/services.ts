import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The repository root and this folder, for the paths the services are started with. */
export const repoRoot = resolve(import.meta.dirname, "../../..");
export const integrationRoot = resolve(import.meta.dirname, "../..");

export interface Service {
  /** What the service printed as `{"listening": url}`. */
  url: string;
  /** Everything it wrote so far, stdout and stderr interleaved. */
  output(): string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/**
 * Starts `node <args>` and resolves once it prints a line `{"listening": "<url>"}` (our
 * framework servers do) or, for our own CLI, its `acp-agui listening` log line. Rejects with
 * the service's output when it exits first or takes longer than `timeoutMs`.
 */
export function startService(
  name: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Service> {
  const child = spawn(process.execPath, args, {
    cwd: options.cwd ?? repoRoot,
    env: {
      ...process.env,
      // No telemetry from the frameworks, no tracing: the tests run without a network.
      COPILOTKIT_TELEMETRY_DISABLED: "true",
      DO_NOT_TRACK: "1",
      LANGSMITH_TRACING: "false",
      LANGCHAIN_TRACING_V2: "false",
      MASTRA_TELEMETRY_DISABLED: "true",
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let output = "";
  let buffer = "";
  const exited = new Promise<number | null>((done) =>
    child.on("exit", (code) => {
      running.delete(child);
      done(code);
    }),
  );
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise<Service>((resolveService, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(
        new Error(`${name} did not start within ${options.timeoutMs ?? 150_000} ms:\n${output}`),
      );
    }, options.timeoutMs ?? 150_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      buffer += chunk;
      let newline = buffer.indexOf("\n");
      while (newline !== -1) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf("\n");
        const url = listeningUrl(line);
        if (url) {
          clearTimeout(timer);
          resolveService({ url, output: () => output, stop });
        }
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => {
      output += chunk;
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before it served:\n${output}`));
    });
  });
}

function listeningUrl(line: string): string | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const parsed = JSON.parse(line) as { listening?: string; msg?: string; url?: string };
    if (typeof parsed.listening === "string") return parsed.listening;
    if (parsed.msg === "acp-agui listening" && typeof parsed.url === "string") return parsed.url;
  } catch {
    // Not a line of ours.
  }
  return undefined;
}

/**
 * Our server as users run it, the built CLI (`node dist/cli.js`), on an in-memory database.
 * Not from source through tsx: tsx would also resolve the agents' own dependencies, and it
 * prefers a package's stray `.ts` sources over its built `.js` (fast-json-patch ships both).
 */
export async function startAcpAgui(
  agents: unknown[],
  env: Record<string, string> = {},
): Promise<Service & { workspace: string }> {
  const cli = join(repoRoot, "dist/cli.js");
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` first`);
  const workspace = mkdtempSync(join(tmpdir(), "acp-agui-integration-"));
  const config = join(workspace, "config.json");
  writeFileSync(config, JSON.stringify({ agents }, null, 2));
  const service = await startService(
    "acp-agui",
    [cli, "serve", "--config", config, "--port", "0", "--db", ":memory:"],
    { env: { LOG_LEVEL: "info", ...env } },
  );
  return { ...service, workspace };
}

/** A file the agents' models write their observations to (see `agents/probe.mjs`). */
export function probeFile(): { path: string; read(): Array<Record<string, unknown>> } {
  const path = join(mkdtempSync(join(tmpdir(), "acp-agui-probe-")), "probe.jsonl");
  writeFileSync(path, "");
  return {
    path,
    read: () =>
      readFileSync(path, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** Polls `read` until `accept` holds; fails after `timeoutMs` saying what it waited for. */
export async function eventually<T>(
  what: string,
  read: () => Promise<T> | T,
  accept: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await read();
    if (accept(last)) return last;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}; last seen: ${JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
