import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative, resolve, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The curl walk-through (docs/walkthrough.md), run as a user runs it: `npm start` (which builds, then serves
 * config/sample.yaml), then every ```sh block of the section in order, in one bash session, so
 * variables carry over. Each command must succeed, print nothing on stderr, answer no HTTP
 * error the walk-through does not announce, and print what its `# →` comment says (`…` stands for
 * anything). The only liberty taken: `localhost:8000` becomes the port the server got.
 */

const root = resolve(import.meta.dirname, "../..");
const WALKTHROUGH = "docs/walkthrough.md";
const SECTION = "# A walk through with curl";
const DOC_PORT = "localhost:8000";

interface Command {
  block: number;
  /** The command as written (continuation lines included), without its `# →` comment. */
  text: string;
  /** What the walk-through says it prints, or undefined when it says nothing. */
  expected?: string;
}

/** The ```sh blocks of the walk-through section, cut into commands with their expectations. */
function walkthroughCommands(doc: string): Command[] {
  const start = doc.indexOf(SECTION);
  if (start === -1) throw new Error(`${WALKTHROUGH} has no "${SECTION}" heading`);
  const end = doc.indexOf("\n## ", start + SECTION.length);
  const section = doc.slice(start, end === -1 ? undefined : end);
  const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  const commands: Command[] = [];
  blocks.forEach((body, block) => {
    let pending: string[] = [];
    for (const line of body.split("\n")) {
      const standalone = /^\s*# → (.*)$/.exec(line);
      if (standalone) {
        const last = commands.at(-1);
        if (!last || last.block !== block || last.expected !== undefined || pending.length > 0) {
          throw new Error(`walk-through block ${block + 1}: "# →" must follow a command: ${line}`);
        }
        last.expected = standalone[1]!;
        continue;
      }
      if (line.trim() === "" && pending.length === 0) continue;
      pending.push(line);
      if (line.endsWith("\\")) continue;
      const text = pending.join("\n");
      pending = [];
      const trailing = / +# → (.*)$/.exec(text);
      commands.push(
        trailing
          ? { block, text: text.slice(0, trailing.index), expected: trailing[1]! }
          : { block, text },
      );
    }
    if (pending.length > 0)
      throw new Error(`walk-through block ${block + 1} ends inside a command`);
  });
  return commands;
}

/** `…` matches anything, a space any run of whitespace (frames span lines); all else literally. */
function expectationPattern(expected: string): RegExp {
  const parts = expected
    .trim()
    .split("…")
    .map((part) =>
      part
        .split(/\s+/)
        .map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join("\\s+"),
    );
  return new RegExp(`^${parts.join("[\\s\\S]*?")}$`);
}

/** HTTP error statuses an expectation announces (`… 404`). */
function announcedErrors(expected: string | undefined): number[] {
  return [...(expected ?? "").matchAll(/(?:^|\s)([45]\d\d)(?=\s|$)/g)].map((m) => Number(m[1]));
}

interface Outcome {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Final HTTP status of every request the command made. */
  statuses: number[];
}

const commands = walkthroughCommands(readFileSync(join(root, WALKTHROUGH), "utf8"));

describe("the curl walk-through, run as written against npm start", () => {
  let server: ChildProcess | undefined;
  let serverExited: Promise<number | null> | undefined;
  let startOutput = { stdout: "", stderr: "" };
  let work: string | undefined;
  const outcomes: Outcome[] = [];

  beforeAll(async () => {
    const curl = spawnSync("curl", ["--version"], { encoding: "utf8" });
    if (curl.error || curl.status !== 0) {
      throw new Error("the curl walk-through needs curl on the PATH (apt-get install curl)");
    }
    work = mkdtempSync(join(tmpdir(), "acp-readme-"));
    const started = npmStart(
      copyOfRepository(join(work, "acp-agui")),
      join(work, "walkthrough.db"),
    );
    server = started.child;
    serverExited = started.exited;
    const url = await started.listening;
    // What the server logs from here on is not the build's output.
    startOutput = { ...started.output };
    const base = url.replace("http://127.0.0.1", "localhost");
    outcomes.push(...runInOneShell(commands, base, work));
  }, 300_000);

  afterAll(async () => {
    if (server?.pid !== undefined && server.exitCode === null) {
      // npm runs the server as its grandchild: signal the whole process group started below.
      process.kill(-server.pid, "SIGTERM");
      await serverExited;
    }
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("has shell blocks to run, and commands that say what they print", () => {
    expect(new Set(commands.map((c) => c.block)).size).toBeGreaterThanOrEqual(6);
    expect(commands.filter((c) => c.expected !== undefined).length).toBeGreaterThanOrEqual(15);
  });

  it("the checker is strict: a wrong answer, an unannounced status or a stray line fails", () => {
    const pattern = expectationPattern('{"run":{…"status":"success"…},"output":{…}}');
    expect('{"run":{"run_id":"r","status":"success"},"output":{"type":"result"}}').toMatch(pattern);
    expect('{"run":{"run_id":"r","status":"error"},"output":{"type":"error"}}').not.toMatch(
      pattern,
    );
    expect('{"run":{"status":"success"},"output":{}} and more').not.toMatch(pattern);
    expect("id: 1\nevent: agent_event\ndata: {}").toMatch(
      expectationPattern("id: 1 event: agent_event data: {…}"),
    );
    expect(announcedErrors('"thread … is busy" 409')).toEqual([409]);
    expect(announcedErrors("{…}")).toEqual([]);
    const parsed = walkthroughCommands(
      [
        SECTION,
        "",
        "```sh",
        "A=$(echo 1 \\",
        "  | cat)   # → 1",
        "echo $A",
        "# → 1",
        "```",
        "## Next",
      ].join("\n"),
    );
    expect(parsed).toEqual([
      { block: 0, text: "A=$(echo 1 \\\n  | cat)", expected: "1" },
      { block: 0, text: "echo $A", expected: "1" },
    ]);
  });

  it("npm start builds quietly: nothing but npm's own script lines before the server logs", () => {
    const beforeLogs = startOutput.stdout.split("\n").filter((line) => !line.startsWith("{"));
    expect(beforeLogs.filter((line) => line.trim() !== "" && !line.startsWith("> "))).toEqual([]);
    expect(startOutput.stderr).toBe("");
  });

  // `%s` of a plain string: vitest shortens object fields in test names.
  it.each(
    commands.map((command, index): [string, number] => [
      `block ${command.block + 1} runs as written: ${command.text.split("\n")[0]!.slice(0, 90)}`,
      index,
    ]),
  )("%s", (_name, index) => {
    const command = commands[index]!;
    const outcome = outcomes[index];
    expect(outcome, `never ran:\n${command.text}`).toBeDefined();
    const context = `${command.text}\n--- stdout:\n${outcome!.stdout}\n--- stderr:\n${outcome!.stderr}`;
    expect(outcome!.exitCode, context).toBe(0);
    expect(outcome!.stderr, context).toBe("");
    const announced = announcedErrors(command.expected);
    const unannounced = outcome!.statuses.filter((s) => s >= 400 && !announced.includes(s));
    expect(unannounced, `HTTP errors the walk-through does not announce\n${context}`).toEqual([]);
    for (const status of announced) expect(outcome!.statuses, context).toContain(status);
    if (command.expected !== undefined) {
      expect(outcome!.stdout.trim(), context).toMatch(expectationPattern(command.expected));
    }
  });
});

/**
 * The repository's own files in `dir`, with its installed packages linked in: `npm start`
 * builds there, so the build it runs never rewrites the `dist/` that other test files are
 * running servers from at the same moment.
 */
function copyOfRepository(dir: string): string {
  const left = new Set(["node_modules", "dist", "data", ".git", "test-results", ".tmp"]);
  cpSync(root, dir, {
    recursive: true,
    filter: (source) => {
      const path = relative(root, source);
      const top = path.split(sep)[0]!;
      const generated = path === join("src", "validation", "generated");
      return !left.has(top) && !generated && basename(path) !== "node_modules";
    },
  });
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

/** `npm start -- --port 0 --db FILE`: the README's start command on a free port and a fresh database. */
function npmStart(cwd: string, db: string) {
  const child = spawn("npm", ["start", "--", "--port", "0", "--db", db], {
    cwd,
    // As a user types it: no verbose mode inherited from an `npm test --verbose` around us.
    env: { ...process.env, LOG_LEVEL: "info", npm_config_loglevel: "notice", VERBOSE: "" },
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group, so the server (npm's grandchild) can be stopped with it.
    detached: true,
  });
  const output = { stdout: "", stderr: "" };
  child.stdout!.on("data", (chunk) => (output.stdout += chunk));
  child.stderr!.on("data", (chunk) => (output.stderr += chunk));
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
  const listening = new Promise<string>((done, fail) => {
    child.stdout!.on("data", () => {
      for (const line of output.stdout.split("\n")) {
        if (!line.startsWith("{")) continue;
        const log = JSON.parse(line) as { msg?: string; url?: string };
        if (log.msg === "acp-agui listening" && log.url) return done(log.url);
      }
    });
    void exited.then((code) =>
      fail(new Error(`npm start exited with ${code}:\n${output.stderr}${output.stdout}`)),
    );
  });
  return { child, exited, listening, output };
}

/**
 * Runs every command in one `bash` process and splits its output per command with markers.
 * `curl` is wrapped only to dump each response's headers to a file (`-D`), which the command
 * does not otherwise print, so its output is exactly what the user sees.
 */
function runInOneShell(list: Command[], base: string, work: string): Outcome[] {
  const headers = join(work, "headers");
  mkdirSync(headers);
  const marker = "@@acp-readme@@";
  const script = [
    "set -u -o pipefail",
    `curl() { command curl -D "$(mktemp -p '${headers}')" "$@"; }`,
    ...list.flatMap((command, index) => [
      `printf '${marker} start ${index}\\n'; printf '${marker} start ${index}\\n' >&2`,
      command.text.replaceAll(DOC_PORT, base),
      `__status=$?; printf '\\n${marker} end ${index} %d\\n' "$__status"; printf '\\n${marker} end ${index}\\n' >&2`,
      `printf '${marker} headers ${index}\\n'; cat '${headers}'/* 2>/dev/null; rm -f '${headers}'/*`,
      `printf '${marker} done ${index}\\n'`,
    ]),
  ].join("\n");
  const scriptPath = join(work, "walkthrough.sh");
  writeFileSync(scriptPath, script);
  const run = spawnSync("bash", ["--noprofile", "--norc", scriptPath], {
    cwd: work,
    encoding: "utf8",
    timeout: 180_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  rmSync(headers, { recursive: true, force: true });
  return list.map((_, index) => {
    const section = (text: string, from: string, to: string) => {
      const a = text.indexOf(`${marker} ${from} ${index}`);
      const b = text.indexOf(`${marker} ${to} ${index}`, a);
      if (a === -1 || b === -1) return undefined;
      return text.slice(text.indexOf("\n", a) + 1, b);
    };
    const stdout = section(run.stdout, "start", "end");
    const status = new RegExp(`${marker} end ${index} (\\d+)`).exec(run.stdout);
    const headerText = section(run.stdout, "headers", "done") ?? "";
    const statuses = [...headerText.matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)]
      .map((m) => Number(m[1]))
      .filter((s) => s >= 200);
    return {
      exitCode: status ? Number(status[1]) : -1,
      stdout: stdout === undefined ? `(did not run)\n${run.stderr}` : stdout.replace(/\n$/, ""),
      stderr: (section(run.stderr, "start", "end") ?? "").replace(/\n$/, ""),
      statuses,
    };
  });
}
