import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const children: ChildProcess[] = [];

/** Starts the real CLI (through tsx, as `npm run dev` does) and collects its output. */
function startCli(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk) => (stdout += chunk));
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
  const listening = new Promise<string>((done, fail) => {
    const check = () => {
      const line = stdout.split("\n").find((l) => l.includes('"acp-agui listening"'));
      if (line) return done((JSON.parse(line) as { url: string }).url);
    };
    child.stdout!.on("data", check);
    void exited.then((code) => fail(new Error(`exited with ${code}: ${stderr}${stdout}`)));
  });
  // Tests that expect a failed start never await `listening`; keep its rejection handled.
  listening.catch(() => undefined);
  return { child, exited, listening, output: () => ({ stdout, stderr }) };
}

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

describe("acp-agui serve", () => {
  it("serves the sample config on the port given, then exits 0 on SIGTERM", async () => {
    const db = join(mkdtempSync(join(tmpdir(), "acp-cli-")), "cli.db");
    const cli = startCli(["serve", "--config", "config/sample.yaml", "--port", "0", "--db", db]);
    const url = await cli.listening;
    const agents = (await (
      await fetch(`${url}/agents/search`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      })
    ).json()) as Array<{ metadata: { ref: { name: string } } }>;
    expect(agents.map((a) => a.metadata.ref.name).sort()).toEqual([
      "approval-demo",
      "echo",
      "remote-echo",
      "scripted-demo",
      "word-count",
    ]);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
    expect(cli.output().stdout).toContain("shutting down");
  });

  it("never logs the password of a PostgreSQL DATABASE_URL", async () => {
    // The test server trusts local connections: any password is accepted, and must not show.
    const cli = startCli(["serve", "--config", "config/sample.yaml", "--port", "0"], {
      DATABASE_URL: "postgres://postgres:s3cret-Pa55@127.0.0.1:5432/test?schema=cli_redact",
    });
    await cli.listening;
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
    const { stdout, stderr } = cli.output();
    expect(stdout).toContain(
      '"database":"postgres://postgres:***@127.0.0.1:5432/test?schema=cli_redact"',
    );
    expect(stdout + stderr).not.toContain("s3cret-Pa55");
  });

  it("takes the config path and port from the environment", async () => {
    const cli = startCli(["serve"], {
      ACP_AGUI_CONFIG: "config/sample.yaml",
      PORT: "0",
      DATABASE_URL: ":memory:",
    });
    const url = await cli.listening;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    cli.child.kill("SIGINT");
    expect(await cli.exited).toBe(0);
  });

  it("starts with an A2A agent whose card cannot be read: a warning, and its runs fail naming it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-cli-"));
    const file = join(dir, "a2a.yaml");
    writeFileSync(
      file,
      [
        "agents:",
        "  - name: faraway",
        "    version: 1.0.0",
        "    description: An A2A agent nobody runs.",
        "    adapter: { type: a2a, url: 'http://127.0.0.1:9/', connectTimeoutMs: 2000 }",
        "",
      ].join("\n"),
    );
    const cli = startCli(["serve", "--config", file, "--port", "0", "--db", ":memory:"]);
    const url = await cli.listening;
    expect(cli.output().stdout).toContain(
      "a2a: the A2A agent at http://127.0.0.1:9/: its agent card could not be read: ",
    );
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const wait = (await (
      await fetch(`${url}/runs/wait`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ input: { messages: [{ role: "user", content: "hi" }] } }),
      })
    ).json()) as { run: { status: string }; output: { description: string } };
    expect(wait.run.status).toBe("error");
    expect(wait.output.description).toContain("its agent card could not be read");
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
  });

  it("refuses to start on a bad config, naming the key path and line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-cli-"));
    const file = join(dir, "bad.yaml");
    writeFileSync(
      file,
      [
        "agents:",
        "  - name: echo",
        "    version: 1.0.0",
        "    description: x",
        "    adapter: { type: ehco }",
        "",
      ].join("\n"),
    );
    const cli = startCli(["serve", "--config", file, "--db", ":memory:"]);
    expect(await cli.exited).toBe(1);
    expect(cli.output().stderr).toMatch(
      /bad\.yaml:5:\d+: agents\[0\]\.adapter\.type must be one of/,
    );
  });

  it("refuses to start without a config, saying how to give one", async () => {
    const cli = startCli(["serve"], { ACP_AGUI_CONFIG: "" });
    expect(await cli.exited).toBe(2);
    expect(cli.output().stderr).toContain("--config FILE");
  });
});

describe("acp-agui called the wrong way", () => {
  const dir = mkdtempSync(join(tmpdir(), "acp-cli-"));
  const sample = "config/sample.yaml";
  const cases: Array<[string, string[], Record<string, string>, string]> = [
    [
      "an unknown flag",
      ["serve", "--prot", "8000"],
      {},
      "unknown option --prot (did you mean --port?)",
    ],
    [
      "a flag spelt as in other tools",
      ["--config", sample, "--database", "x.db"],
      {},
      "unknown option --database (did you mean --db?)",
    ],
    ["a flag without its value at the end", ["serve", "--config"], {}, "--config needs a value"],
    [
      "a flag followed by another flag instead of its value",
      ["serve", "--config", "--db", "x.db"],
      {},
      '--config needs a value, and "--db" looks like an option (write --config=--db if it is the value)',
    ],
    ["an empty inline value", ["serve", `--config=`], {}, "--config needs a value"],
    [
      "a port that is not a number",
      ["--config", sample, "--port", "abc"],
      {},
      '--port must be an integer 0–65535 (got "abc")',
    ],
    [
      "a port out of range",
      ["--config", sample, "--port", "70000"],
      {},
      '--port must be an integer 0–65535 (got "70000")',
    ],
    [
      "a PORT variable that is not a number",
      ["--config", sample],
      { PORT: "eighty" },
      'PORT must be an integer 0–65535 (got "eighty")',
    ],
    [
      "a grace period that is not a number",
      ["--config", sample, "--grace", "soon"],
      {},
      '--grace must be a non-negative integer (got "soon")',
    ],
    [
      "an unknown log level",
      ["--config", sample, "--log-level", "loud"],
      {},
      '--log-level must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
    ],
    [
      "an unknown command",
      ["start", "--config", sample],
      {},
      'unknown command "start" (the commands are serve and assign-owner)',
    ],
    ["a stray argument", ["serve", sample], {}, `unexpected argument "${sample}"`],
    [
      "a missing config file",
      ["--config", join(dir, "absent.yaml")],
      {},
      `${join(dir, "absent.yaml")}: config file not found (looked for ${join(dir, "absent.yaml")})`,
    ],
    [
      "a directory as the config file",
      ["--config", dir],
      {},
      `${dir}: this is a directory, not a config file`,
    ],
  ];

  it.each(cases)(
    "%s › one line naming it, where the usage is, exit status 2",
    async (_what, args, env, line) => {
      // Should a mistake go unnoticed, the server starts on a free port and a throwaway database.
      const cli = startCli(args, { PORT: "0", DATABASE_URL: ":memory:", ...env });
      expect(await cli.exited).toBe(2);
      const { stdout, stderr } = cli.output();
      expect(stderr).toBe(`acp-agui: ${line}\nRun acp-agui --help for the usage.\n`);
      expect(stderr).not.toMatch(/^\s+at |node:internal|ERR_PARSE_ARGS/m);
      expect(stdout).toBe("");
    },
  );

  it("--version and -v print the package's version on stdout and exit 0", async () => {
    const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      version: string;
    };
    for (const flag of ["--version", "-v"]) {
      const cli = startCli([flag]);
      expect(await cli.exited).toBe(0);
      expect(cli.output().stdout).toBe(`${version}\n`);
      expect(cli.output().stderr).toBe("");
    }
  });

  it("--help prints the usage on stdout and exits 0", async () => {
    const cli = startCli(["--help"]);
    expect(await cli.exited).toBe(0);
    expect(cli.output().stdout).toMatch(/^Usage: acp-agui serve --config FILE/);
    expect(cli.output().stdout).toContain("--db PATH");
    expect(cli.output().stderr).toBe("");
  });
});
