import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parse } from "yaml";

export const root = resolve(import.meta.dirname, "../..");

/** What a browser test needs of the real, built server. */
export interface BuiltServer {
  url: string;
  /** The folder of its config and SQLite file (`data.db`): pass it again to restart on them. */
  dir: string;
  stop(): Promise<void>;
}

/**
 * Starts `node dist/cli.js serve` (what `npm start` runs) on a free port, with a temporary
 * SQLite file and the agents of config/sample.yaml plus `extra` ones. The remote AG-UI demo
 * agent is pointed at this server's own port, as the sample points it at 8000.
 */
export async function startBuiltServer(
  extra: unknown[] = [],
  env: Record<string, string> = {},
  reuse?: { dir: string },
): Promise<BuiltServer> {
  for (const file of ["dist/cli.js", "dist/ui/index.html"]) {
    if (!existsSync(join(root, file))) {
      throw new Error(
        `${file} is missing: the browser tests drive the built server; run npm run build`,
      );
    }
  }
  const port = await freePort();
  const dir = reuse?.dir ?? mkdtempSync(join(tmpdir(), "acp-inspector-e2e-"));
  const sample = parse(readFileSync(join(root, "config/sample.yaml"), "utf8"));
  for (const agent of sample.agents) {
    if (agent.adapter.type === "module")
      agent.adapter.path = resolve(root, "config", agent.adapter.path);
    if (agent.adapter.type === "agui-http") {
      agent.adapter.url = agent.adapter.url.replace(/127\.0\.0\.1:8000/, `127.0.0.1:${port}`);
    }
  }
  sample.agents.push(...extra);
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify(sample));
  const args = ["dist/cli.js", "serve", "--config", configPath, "--port", String(port)];
  args.push("--db", join(dir, "data.db"));
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const url = await listening(child);
  return {
    url,
    dir,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

function listening(child: ChildProcess): Promise<string> {
  let output = "";
  let started = false;
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`the server did not start: ${output}`)), 20_000);
    child.stderr!.on("data", (chunk) => (output += chunk));
    // Read all along (a full pipe would stall the server), keeping only what comes before start.
    child.stdout!.on("data", (chunk) => {
      if (started) return;
      output += chunk;
      const line = output.split("\n").find((l) => l.includes('"acp-agui listening"'));
      if (!line) return;
      started = true;
      clearTimeout(timer);
      done(JSON.parse(line).url as string);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      if (!started) fail(new Error(`the server exited with ${code}: ${output}`));
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => done(typeof address === "object" && address ? address.port : 0));
    });
  });
}
