import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { loadConfig, parseConfig } from "../../src/config/load.js";
import { LIMIT_DEFAULTS } from "../../src/config/schema.js";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { configError, samplePath, tempDir } from "./helpers.js";

const yaml = (text: string, env: Record<string, string> = {}) =>
  parseConfig(text, { filename: "test.yaml", env, baseDir: "/nowhere" });

/** One valid agent, as YAML lines under `agents:`. */
const ECHO = `  - name: echo
    version: 1.0.0
    description: Echoes.
    adapter: { type: echo }
`;

describe("loadConfig", () => {
  it("loads the sample config with defaults filled in", async () => {
    const config = await loadConfig(samplePath);
    expect(config.agents.map((a) => a.name)).toEqual([
      "echo",
      "scripted-demo",
      "approval-demo",
      "word-count",
      "remote-echo",
    ]);
    expect(config.server).toEqual(DEFAULT_SETTINGS);
    const approval = config.agents[2]!;
    expect(approval.adapter.type).toBe("scripted");
    if (approval.adapter.type !== "scripted") return;
    expect(approval.adapter.segments).toHaveLength(2);
    expect(approval.adapter.segments.every((s) => s.kind === "inline")).toBe(true);
    expect(approval.retryOnRestart).toBe(true);
  });

  it("fills server and limit defaults when they are absent", async () => {
    const config = await yaml(`agents:\n${ECHO}`);
    expect(config.server).toEqual(DEFAULT_SETTINGS);
    expect(config.agents[0]!.limits).toEqual(LIMIT_DEFAULTS);
    expect(config.agents[0]!.adapter).toEqual({ type: "echo", delayMs: 0 });
    expect(config.agents[0]!.specs).toEqual({});
    expect(config.agents[0]!.events).toEqual({ dropRaw: false });
  });

  it("reads an agent's events.dropRaw, and refuses a misspelt key under events", async () => {
    const config = await yaml(`agents:\n${ECHO}    events: { dropRaw: true }\n`);
    expect(config.agents[0]!.events).toEqual({ dropRaw: true });
    const error = await configError(() => yaml(`agents:\n${ECHO}    events: { dropRAW: true }\n`));
    expect(error.message).toContain(
      'agents[0].events.dropRAW is not a known key (did you mean "dropRaw"?)',
    );
  });

  it("merges partial server settings over the defaults", async () => {
    const config = await yaml(
      `server:\n  port: 9000\n  webhooks: { maxAttempts: 2 }\nagents:\n${ECHO}`,
    );
    expect(config.server.port).toBe(9000);
    expect(config.server.webhooks).toEqual({ ...DEFAULT_SETTINGS.webhooks, maxAttempts: 2 });
  });

  it("reads the webhook delivery bounds and the push config limit, refusing values out of range", async () => {
    const config = await yaml(
      `server:
  webhooks: { timeoutSeconds: 3.5, connectTimeoutSeconds: 1, concurrency: 8, perTargetConcurrency: 1 }
  a2a: { maxPushConfigsPerTask: 50 }
agents:
${ECHO}`,
    );
    expect(config.server.webhooks).toEqual({
      allowPrivateTargets: false,
      maxAttempts: 5,
      timeoutSeconds: 3.5,
      connectTimeoutSeconds: 1,
      concurrency: 8,
      perTargetConcurrency: 1,
    });
    expect(config.server.a2a.maxPushConfigsPerTask).toBe(50);
    const zero = await configError(() =>
      yaml(`server:
  webhooks: { concurrency: 0 }
agents:
${ECHO}`),
    );
    expect(zero.message).toContain("server.webhooks.concurrency");
    const slow = await configError(() =>
      yaml(`server:
  webhooks: { timeoutSeconds: 0 }
agents:
${ECHO}`),
    );
    expect(slow.message).toContain("server.webhooks.timeoutSeconds");
  });

  it("reads JSON files", async () => {
    const dir = await tempDir({
      "c.json": JSON.stringify({
        agents: [{ name: "a", version: "1", description: "", adapter: { type: "echo" } }],
      }),
    });
    const config = await loadConfig(join(dir, "c.json"));
    expect(config.agents[0]!.name).toBe("a");
  });

  it("resolves script and module paths against the config file's directory", async () => {
    const dir = await tempDir({
      "run.json": JSON.stringify({ stream: [{ type: "RUN_STARTED" }], expect: {} }),
      "agent.mjs": "export default {};",
      "c.yaml": `agents:
  - name: s
    version: "1"
    description: d
    adapter: { type: scripted, script: run.json }
  - name: m
    version: "1"
    description: d
    adapter: { type: module, path: ./agent.mjs, export: agent }
  - name: p
    version: "1"
    description: d
    adapter: { type: module, path: some-package }
`,
    });
    const config = await loadConfig(join(dir, "c.yaml"));
    expect(config.baseDir).toBe(dir);
    expect(config.agents[0]!.adapter).toEqual({
      type: "scripted",
      segments: [{ kind: "file", path: join(dir, "run.json") }],
      delayMs: 0,
    });
    expect(config.agents[1]!.adapter).toEqual({
      type: "module",
      path: "./agent.mjs",
      specifier: pathToFileURL(join(dir, "agent.mjs")).href,
      export: "agent",
    });
    expect(config.agents[2]!.adapter).toMatchObject({
      specifier: "some-package",
      export: "default",
    });
  });

  it("expands environment references in agui-http headers and keeps escaped ones literal", async () => {
    const config = await yaml(
      `agents:
  - name: remote
    version: "1"
    description: d
    adapter:
      type: agui-http
      url: https://agent.example/run
      headers: { Authorization: "Bearer \${TOKEN}", X-Literal: "$\${TOKEN}" }
`,
      { TOKEN: "s3cret" },
    );
    expect(config.agents[0]!.adapter).toEqual({
      type: "agui-http",
      url: "https://agent.example/run",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text is the point.
      headers: { Authorization: "Bearer s3cret", "X-Literal": "${TOKEN}" },
      connectTimeoutMs: 10_000,
      idleTimeoutMs: 300_000,
      protocol: "sse",
    });
  });

  it("reads an agui-http stopUrl with {threadId} and {runId}, and refuses one that is not http", async () => {
    const agent = (stopUrl: string) => `agents:
  - name: remote
    version: "1"
    description: d
    adapter:
      type: agui-http
      url: https://agent.example/run
      stopUrl: ${stopUrl}
`;
    const config = await yaml(agent("https://agent.example/stop/{threadId}?run={runId}"));
    expect(config.agents[0]!.adapter).toMatchObject({
      stopUrl: "https://agent.example/stop/{threadId}?run={runId}",
    });
    const err = await configError(() => yaml(agent("ftp://agent.example/stop")));
    expect(err.message).toContain("agents[0].adapter.stopUrl must be an http:// or https:// URL");
  });

  it("locates key paths in the file", async () => {
    const config = await loadConfig(samplePath);
    const position = config.locate(["agents", 1, "name"]);
    expect(position).toEqual({ line: expect.any(Number), column: 11 });
  });
});

describe("loadConfig › bad files", () => {
  it("names a file that does not exist", async () => {
    const err = await configError(() => loadConfig("/nowhere/missing.yaml"));
    expect(err.message).toBe(
      "/nowhere/missing.yaml: config file not found (looked for /nowhere/missing.yaml)",
    );
  });

  it("gives the YAML parser's message and line for unparseable YAML", async () => {
    const err = await configError(() => yaml("agents: [\n  a: 1\n"));
    expect(err.message).toMatch(/^test\.yaml:3:1: invalid YAML: Flow sequence/);
  });

  it("gives the JSON parser's message and line:column for unparseable JSON", async () => {
    const text = '{\n  "agents": [\n    {"name": "x",}\n  ]\n}';
    const err = await configError(() => parseConfig(text, { filename: "c.json" }));
    expect(err.message).toBe("c.json:3:18: invalid JSON: Expected double-quoted property name");
  });

  it("reports a key given twice", async () => {
    const err = await configError(() => yaml(`agents:\n${ECHO}    name: again\n`));
    expect(err.message).toBe('test.yaml:6:5: key "name" appears twice in the same mapping');
  });

  it("reports an empty file", async () => {
    const err = await configError(() => yaml(""));
    expect(err.message).toBe(
      "test.yaml: the file is empty; a config needs at least an `agents` list",
    );
  });

  it("names the key path and line:column of an unknown adapter type", async () => {
    const err = await configError(() =>
      yaml(
        `agents:\n${ECHO}  - name: other\n    version: 1.0.0\n    description: d\n    adapter:\n      type: ehco\n`,
      ),
    );
    expect(err.message).toBe(
      'test.yaml:10:13: agents[1].adapter.type must be one of echo, scripted, agui-http, openai, module, a2a (got "ehco")',
    );
  });

  it("names a missing required key and the line of its parent", async () => {
    const err = await configError(() =>
      yaml("agents:\n  - name: echo\n    version: 1.0.0\n    adapter: { type: echo }\n"),
    );
    expect(err.message).toBe("test.yaml:2:5: agents[0].description is required");
  });

  it("names a missing adapter option", async () => {
    const err = await configError(() =>
      yaml(
        "agents:\n  - name: a\n    version: '1'\n    description: d\n    adapter:\n      type: openai\n      model: gpt\n",
      ),
    );
    expect(err.message).toBe("test.yaml:6:7: agents[0].adapter.baseUrl is required");
  });

  it("names an unknown key, its line, and the key it was probably meant to be", async () => {
    const err = await configError(() =>
      yaml(`agents:\n${ECHO}    limits:\n      maxConcurentRuns: 3\n`),
    );
    expect(err.message).toBe(
      'test.yaml:7:7: agents[0].limits.maxConcurentRuns is not a known key (did you mean "maxConcurrentRuns"?)',
    );
  });

  it("names an unknown adapter option, listing the known ones", async () => {
    const err = await configError(() =>
      yaml(
        "agents:\n  - name: a\n    version: '1'\n    description: d\n    adapter: { type: module, path: x, options: {} }\n",
      ),
    );
    expect(err.message).toBe(
      "test.yaml:5:39: agents[0].adapter.options is not a known key (known keys: path, export)",
    );
  });

  it("says where an adapter option that moved lives now", async () => {
    const err = await configError(() =>
      yaml(
        "agents:\n  - name: a\n    version: '1'\n    description: d\n    adapter: { type: a2a, url: 'http://127.0.0.1:9', maxEventBytes: 1000 }\n",
      ),
    );
    expect(err.message).toBe(
      "test.yaml:5:54: agents[0].adapter.maxEventBytes is not a known key here any more: it moved to the agent's limits.maxEventBytes (beside adapter:) or server.limits.maxEventBytes, which bound every adapter",
    );
  });

  it("names a value of the wrong type and shows it", async () => {
    const err = await configError(() => yaml(`server:\n  port: "8000"\nagents:\n${ECHO}`));
    expect(err.message).toBe('test.yaml:2:9: server.port must be an integer (got "8000")');
  });

  it("hints at quoting when YAML read a version as a number", async () => {
    const err = await configError(() =>
      yaml(
        "agents:\n  - name: a\n    version: 1.0\n    description: d\n    adapter: { type: echo }\n",
      ),
    );
    expect(err.message).toMatch(
      /^test\.yaml:3:14: agents\[0\]\.version must be .* \(got 1; quote it to make it a string\)$/,
    );
  });

  it("explains a script of the wrong shape, or the field inside it that is wrong", async () => {
    const err = await configError(() =>
      yaml(`agents:
  - name: a
    version: "1"
    description: d
    adapter: { type: scripted, script: 5 }
  - name: b
    version: "1"
    description: d
    adapter: { type: scripted, script: { stream: 5 } }
`),
    );
    expect(err.issues.map((i) => i.message)).toEqual([
      "must be a file path, an array of AG-UI events, or an object with a `stream` array of AG-UI events (got 5)",
      "must be an array (got 5)",
    ]);
    expect(err.message).toContain(
      "test.yaml:9:50: agents[1].adapter.script.stream must be an array",
    );
  });

  it("collects every problem into one message, in file order", async () => {
    const err = await configError(() =>
      yaml(
        `server: { port: -1, logLevel: loud }\nagents:\n  - name: a b\n    version: "1"\n    description: 5\n    adapter: { type: echo, delayMs: 1.5 }\n`,
      ),
    );
    expect(err.issues).toHaveLength(5);
    expect(err.message.split("\n")).toEqual([
      "test.yaml: 5 problems in the config",
      "  test.yaml:1:17: server.port must be >= 0 (got -1)",
      '  test.yaml:1:31: server.logLevel must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
      "  test.yaml:3:11: agents[0].name must be a non-empty name without whitespace, '@' or '/' (got \"a b\")",
      "  test.yaml:5:18: agents[0].description must be a string (got 5; quote it to make it a string)",
      "  test.yaml:6:37: agents[0].adapter.delayMs must be an integer (got 1.5)",
    ]);
  });

  it("names both entries of a duplicate name@version", async () => {
    const err = await configError(() => yaml(`agents:\n${ECHO}${ECHO}`));
    expect(err.message).toBe(
      "test.yaml:6:5: agents[1] repeats echo@1.0.0, already registered by agents[0] (line 2): name@version must be unique (it is the agent id)",
    );
  });

  it("names a header's missing environment variable", async () => {
    const err = await configError(() =>
      yaml(`agents:
  - name: remote
    version: "1"
    description: d
    adapter:
      type: agui-http
      url: https://agent.example/run
      headers:
        Authorization: Bearer \${REMOTE_AGENT_TOKEN}
`),
    );
    expect(err.message).toBe(
      "test.yaml:9:24: agents[0].adapter.headers.Authorization uses environment variable REMOTE_AGENT_TOKEN, which is not set",
    );
  });

  it("names a script file that does not exist", async () => {
    const dir = await tempDir({
      "c.yaml": `agents:
  - name: s
    version: "1"
    description: d
    adapter:
      type: scripted
      segments: [./first.json, ./second.json]
`,
      "first.json": "[]",
    });
    const err = await configError(() => loadConfig(join(dir, "c.yaml")));
    expect(err.message).toBe(
      `${join(dir, "c.yaml")}:7:32: agents[0].adapter.segments[1] names script file ./second.json, which was not found (looked for ${join(dir, "second.json")})`,
    );
  });

  it("names a script file that is not JSON", async () => {
    const dir = await tempDir({
      "c.yaml":
        "agents:\n  - name: s\n    version: '1'\n    description: d\n    adapter: { type: scripted, script: run.json }\n",
      "run.json": "{ nope",
    });
    const err = await configError(() => loadConfig(join(dir, "c.yaml")));
    expect(err.message).toMatch(
      /c\.yaml:5:40: agents\[0\]\.adapter\.script names script file run\.json, which is not valid JSON: /,
    );
  });

  it("names a module file that does not exist", async () => {
    const err = await configError(() =>
      yaml(
        "agents:\n  - name: m\n    version: '1'\n    description: d\n    adapter: { type: module, path: ./agent.js }\n",
      ),
    );
    expect(err.message).toBe(
      "test.yaml:5:36: agents[0].adapter.path names module file ./agent.js, which was not found (looked for /nowhere/agent.js)",
    );
  });

  it("requires exactly one of script and segments", async () => {
    const neither = await configError(() =>
      yaml(
        "agents:\n  - name: s\n    version: '1'\n    description: d\n    adapter: { type: scripted }\n",
      ),
    );
    expect(neither.message).toBe(
      "test.yaml:5:14: agents[0].adapter needs `script` (one run) or `segments` (one script per run segment)",
    );
    const both = await configError(() =>
      yaml(
        "agents:\n  - name: s\n    version: '1'\n    description: d\n    adapter: { type: scripted, script: [], segments: [[]] }\n",
      ),
    );
    expect(both.message).toContain("agents[0].adapter has both `script` and `segments`");
  });

  it("gives the key path (and line) of JSON errors", async () => {
    const text = JSON.stringify(
      { agents: [{ name: "a", version: "1", description: "d", adapter: { type: "ehco" } }] },
      null,
      2,
    );
    const err = await configError(() => parseConfig(text, { filename: "c.json" }));
    expect(err.message).toBe(
      'c.json:8:17: agents[0].adapter.type must be one of echo, scripted, agui-http, openai, module, a2a (got "ehco")',
    );
  });

  it("rejects a config without agents", async () => {
    const err = await configError(() => yaml("server: { port: 1 }\n"));
    expect(err.message).toBe("test.yaml:1:1: agents is required");
    const empty = await configError(() => yaml("agents: []\n"));
    expect(empty.message).toBe("test.yaml:1:9: agents must not be empty");
  });
});
