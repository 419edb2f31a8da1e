import { validate as isUuid, version as uuidVersion, v5 as uuidv5 } from "uuid";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig, parseConfig } from "../../src/config/load.js";
import {
  AGENT_ID_NAMESPACE,
  AgentRegistry,
  agentIdFor,
  compareVersions,
} from "../../src/config/registry.js";
import type { AgentConfig, LoadedConfig } from "../../src/config/schema.js";
import { ANY_INTERRUPT_TYPE, defaultCapabilities, eventSchemaRef } from "../../src/config/specs.js";
import { configError, samplePath, specValidators } from "./helpers.js";

const yaml = (text: string) => parseConfig(text, { filename: "test.yaml", baseDir: "/nowhere" });

const agentYaml = (name: string, version: string, extra = "") =>
  `  - name: ${name}\n    version: "${version}"\n    description: ${name} agent\n    adapter: { type: echo }\n${extra}`;

const validators = specValidators();

describe("AgentRegistry › the sample config", () => {
  let config: LoadedConfig;
  let registry: AgentRegistry;
  beforeAll(async () => {
    config = await loadConfig(samplePath);
    registry = new AgentRegistry(config);
  });

  it("gives every agent a descriptor that validates against ACP AgentACPDescriptor", () => {
    const validate = validators.acp("AgentACPDescriptor");
    for (const agent of registry.list()) {
      expect(validate(agent.descriptor), JSON.stringify(validate.errors)).toBe(true);
    }
  });

  it("gives every agent an ACP Agent that validates against ACP Agent", () => {
    const validate = validators.acp("Agent");
    for (const agent of registry.list()) {
      expect(validate(agent.agent), JSON.stringify(validate.errors)).toBe(true);
      expect(agent.agent).toEqual({
        agent_id: agent.agentId,
        metadata: {
          ref: { name: agent.name, version: agent.version },
          description: agent.config.description,
        },
      });
    }
  });

  it("gives ids that are the UUID v5 of name@version, stable across loads", async () => {
    const again = new AgentRegistry(await loadConfig(samplePath));
    for (const agent of registry.list()) {
      expect(agent.agentId).toBe(uuidv5(`${agent.name}@${agent.version}`, AGENT_ID_NAMESPACE));
      expect(isUuid(agent.agentId) && uuidVersion(agent.agentId)).toBe(5);
      expect(again.getByName(agent.name, agent.version)!.agentId).toBe(agent.agentId);
    }
    // Pinned: changing the namespace or the rule would break every stored agent id.
    expect(agentIdFor("echo", "1.0.0")).toBe("699fc377-8bf9-57ca-b6a1-13cb79c5da63");
  });

  it("has inline scripts made of valid AG-UI events", () => {
    const validate = validators.agui("Event");
    for (const agent of config.agents) {
      if (agent.adapter.type !== "scripted") continue;
      for (const segment of agent.adapter.segments) {
        if (segment.kind !== "inline") continue;
        for (const event of segment.events) {
          expect(validate(event), `${agent.name}: ${JSON.stringify(event)}`).toBe(true);
        }
      }
    }
  });

  it("ends approval-demo's first segment with an interrupt outcome and its second normally", () => {
    const approval = config.agents.find((a) => a.name === "approval-demo")!;
    if (approval.adapter.type !== "scripted") throw new Error("approval-demo is not scripted");
    const [first, second] = approval.adapter.segments.map((s) =>
      s.kind === "inline" ? s.events : [],
    );
    expect(first!.at(-1)).toMatchObject({
      type: "RUN_FINISHED",
      outcome: {
        type: "interrupt",
        interrupts: [{ id: "approve-1", reason: "approval", message: "Approve the plan?" }],
      },
    });
    expect(second!.at(-1)).toMatchObject({ type: "RUN_FINISHED" });
    expect(second!.at(-1)).not.toHaveProperty("outcome");
  });

  it("has no default agent when several are configured", () => {
    expect(registry.defaultAgent()).toBeNull();
  });
});

describe("AgentRegistry › descriptors", () => {
  it("describes an AG-UI agent by default", async () => {
    const registry = new AgentRegistry(await yaml(`agents:\n${agentYaml("a", "1")}`));
    const { specs } = registry.list()[0]!.descriptor;
    expect(specs.capabilities).toEqual({
      threads: true,
      interrupts: true,
      callbacks: true,
      streaming: { values: true, custom: true },
    });
    expect(Object.keys(specs.input.properties as object)).toEqual([
      "messages",
      "state",
      "tools",
      "context",
      "forwardedProps",
    ]);
    expect(specs.input).not.toHaveProperty("additionalProperties");
    expect(specs.output).toEqual({ type: "object" });
    expect(specs.thread_state).toEqual({ type: "object" });
    expect(specs.config).toEqual({ type: "object" });
    expect(specs.custom_streaming_update).toEqual({
      $ref: "/schemas/ag-ui.schema.json#/$defs/Event",
    });
    expect(specs.interrupts).toEqual([
      {
        interrupt_type: ANY_INTERRUPT_TYPE,
        interrupt_payload: { type: "object" },
        resume_payload: { type: "object" },
      },
    ]);
  });

  it("points custom_streaming_update at the server's base URL when given one", async () => {
    const config = await yaml(`agents:\n${agentYaml("a", "1")}`);
    const registry = new AgentRegistry(config, { schemaBaseUrl: "https://acp.example:8000/" });
    expect(registry.list()[0]!.descriptor.specs.custom_streaming_update).toEqual({
      $ref: "https://acp.example:8000/schemas/ag-ui.schema.json#/$defs/Event",
    });
    expect(eventSchemaRef()).toBe("/schemas/ag-ui.schema.json#/$defs/Event");
  });

  it("deep-merges specs over the defaults", async () => {
    const registry = new AgentRegistry(
      await yaml(`agents:
${agentYaml("a", "1")}    specs:
      capabilities: { streaming: { custom: false } }
      input:
        required: [messages]
        properties:
          messages: { minItems: 1 }
          question: { type: string }
      config:
        properties: { temperature: { type: number } }
      resume_payload:
        properties: { approved: { type: boolean } }
`),
    );
    const { specs } = registry.list()[0]!.descriptor;
    expect(specs.capabilities.streaming).toEqual({ values: true, custom: false });
    expect(specs).not.toHaveProperty("custom_streaming_update");
    const properties = specs.input.properties as Record<string, Record<string, unknown>>;
    expect(properties.messages).toMatchObject({ type: "array", minItems: 1 });
    expect(properties.question).toEqual({ type: "string" });
    expect(properties.tools).toMatchObject({ type: "array" });
    expect(specs.input.required).toEqual(["messages"]);
    expect(specs.config).toEqual({
      type: "object",
      properties: { temperature: { type: "number" } },
    });
    expect(specs.interrupts![0]!.resume_payload).toEqual({
      type: "object",
      properties: { approved: { type: "boolean" } },
    });
    expect(validators.acp("AgentACPDescriptor")(registry.list()[0]!.descriptor)).toBe(true);
  });

  it("lets the adapter type refine capabilities before the config does", async () => {
    const config = await yaml(
      `agents:\n${agentYaml("a", "1")}${agentYaml("b", "1")}    specs:\n      capabilities: { interrupts: true }\n`,
    );
    const registry = new AgentRegistry(config, {
      capabilitiesFor: () => ({ interrupts: false, callbacks: false }),
    });
    const [a, b] = registry.list();
    expect(a!.descriptor.specs.capabilities).toMatchObject({ interrupts: false, callbacks: false });
    expect(a!.descriptor.specs).not.toHaveProperty("interrupts");
    expect(a!.validateResume({ anything: 1 })).toBeNull();
    expect(b!.descriptor.specs.capabilities.interrupts).toBe(true);
    expect(defaultCapabilities({ streaming: { values: false } }).streaming).toEqual({
      values: false,
      custom: true,
    });
  });

  it("refuses specs that ACP forbids for a disabled capability", async () => {
    const err = await configError(
      async () =>
        new AgentRegistry(
          await yaml(`agents:
${agentYaml("a", "1")}    specs:
      capabilities: { threads: false }
      thread_state: { type: object }
`),
        ),
    );
    expect(err.message).toBe(
      "test.yaml:8:21: agents[0].specs.thread_state is given but capability threads is false (ACP forbids it then)",
    );
  });

  it("refuses a repeated interrupt type", async () => {
    const err = await configError(
      async () =>
        new AgentRegistry(
          await yaml(`agents:
${agentYaml("a", "1")}    specs:
      interrupts:
        - interrupt_type: approval
        - interrupt_type: approval
`),
        ),
    );
    expect(err.message).toBe(
      'test.yaml:9:27: agents[0].specs.interrupts[1].interrupt_type repeats interrupt type "approval" (must be unique)',
    );
  });

  it("names the agent, key and line of an input schema that is not valid JSON Schema", async () => {
    const err = await configError(
      async () =>
        new AgentRegistry(
          await yaml(`agents:
${agentYaml("a", "1")}    specs:
      input:
        properties:
          question: { type: text }
`),
        ),
    );
    expect(err.message).toBe(
      'test.yaml:9:29: agents[0].specs.input.properties.question.type must be one of array, boolean, integer, null, number, object, string (got "text"): the input schema of agent a@1 is not a valid JSON Schema',
    );
  });

  it("names the agent and key of a schema that does not compile", async () => {
    const err = await configError(
      async () =>
        new AgentRegistry(
          await yaml(`agents:
${agentYaml("a", "1")}    specs:
      config: { $ref: "#/$defs/missing" }
`),
        ),
    );
    expect(err.message).toMatch(
      /^test\.yaml:7:15: agents\[0\]\.specs\.config does not compile \(the config schema of agent a@1\): can't resolve reference #\/\$defs\/missing/,
    );
  });

  it("checks resume payload schemas given per interrupt type", async () => {
    const err = await configError(
      async () =>
        new AgentRegistry(
          await yaml(`agents:
${agentYaml("a", "1")}    specs:
      interrupts:
        - interrupt_type: approval
          resume_payload: { required: approved }
`),
        ),
    );
    expect(err.message).toMatch(
      /^test\.yaml:9:39: agents\[0\]\.specs\.interrupts\[0\]\.resume_payload\.required must be an array \(got "approved"\): the resume_payload of "approval" of agent a@1/,
    );
  });
});

describe("AgentRegistry › lookups", () => {
  let registry: AgentRegistry;
  beforeAll(async () => {
    registry = new AgentRegistry(
      await yaml(
        `agents:\n${agentYaml("echo", "1.10.0")}${agentYaml("echo", "2.0.0-rc.1")}${agentYaml("echo", "1.9.0")}${agentYaml("other", "1")}`,
      ),
    );
  });

  it("gets agents by id", () => {
    const id = agentIdFor("echo", "1.9.0");
    expect(registry.get(id)!.version).toBe("1.9.0");
    expect(registry.get("00000000-0000-0000-0000-000000000000")).toBeNull();
  });

  it("gets agents by name and version, or the highest version of a name", () => {
    expect(registry.getByName("echo", "1.10.0")!.agentId).toBe(agentIdFor("echo", "1.10.0"));
    expect(registry.getByName("echo", "3")).toBeNull();
    expect(registry.getByName("echo")!.version).toBe("2.0.0-rc.1");
    expect(registry.getByName("other")!.version).toBe("1");
    expect(registry.getByName("nobody")).toBeNull();
  });

  it("searches by exact name and version with limit and offset", () => {
    const versions = (agents: { version: string }[]) => agents.map((a) => a.version);
    expect(registry.search({ name: "echo" }).length).toBe(3);
    expect(versions(registry.search({ name: "echo", version: "1.9.0" }))).toEqual(["1.9.0"]);
    expect(registry.search({ name: "ech" })).toEqual([]);
    expect(versions(registry.search({ name: "echo", limit: 1, offset: 1 }))).toEqual([
      "2.0.0-rc.1",
    ]);
    expect(registry.search({}).length).toBe(4);
    expect(registry.search({ limit: 2 }).length).toBe(2);
  });

  it("keeps to the agents a caller may use inside the search, so a page is full", () => {
    // The allowed agents come last in the config: a page taken first and filtered after would
    // come back empty.
    const agentIds = new Set([agentIdFor("echo", "1.9.0"), agentIdFor("other", "1")]);
    const versions = (agents: { version: string }[]) => agents.map((a) => a.version);
    expect(versions(registry.search({ agentIds, limit: 2 }))).toEqual(["1.9.0", "1"]);
    expect(versions(registry.search({ agentIds, limit: 1, offset: 1 }))).toEqual(["1"]);
    expect(versions(registry.search({ agentIds, name: "echo" }))).toEqual(["1.9.0"]);
  });

  it("has a default agent only when exactly one is configured", async () => {
    const single = new AgentRegistry(await yaml(`agents:\n${agentYaml("solo", "1")}`));
    expect(single.defaultAgent()!.name).toBe("solo");
    expect(registry.defaultAgent()).toBeNull();
  });

  it("accepts a plain list of agent configs", () => {
    const agent: AgentConfig = {
      name: "inline",
      version: "1",
      description: "d",
      adapter: { type: "echo", delayMs: 0 },
      specs: {},
      limits: { runTimeoutSeconds: 0, maxConcurrentRuns: 1, maxQueuedRuns: 0 },
      retryOnRestart: false,
      events: { dropRaw: false },
      index: 0,
    };
    expect(new AgentRegistry([agent]).get(agentIdFor("inline", "1"))!.name).toBe("inline");
  });

  it("orders versions by semver precedence", () => {
    const sorted = [
      "1.0.0",
      "banana",
      "1.0.0-alpha.1",
      "1.0.0-alpha",
      "0.9.10",
      "1.0.0-beta",
      "0.9.9",
    ].sort(compareVersions);
    expect(sorted).toEqual([
      "banana",
      "0.9.9",
      "0.9.10",
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-beta",
      "1.0.0",
    ]);
  });
});

describe("AgentRegistry › validating what clients send", () => {
  let registry: AgentRegistry;
  beforeAll(async () => {
    registry = new AgentRegistry(await loadConfig(samplePath));
  });

  it("accepts AG-UI style input and is lenient about extra keys", () => {
    const echo = registry.getByName("echo")!;
    expect(
      echo.validateInput({
        messages: [
          { id: "m1", role: "user", content: "hi" },
          { role: "assistant", toolCalls: [] },
          { role: "user", content: [{ type: "text", text: "hi" }] },
        ],
        state: 5,
        tools: [{ name: "t", description: "d", parameters: { type: "object" } }],
        context: [{ description: "d", value: "v" }],
        forwardedProps: { anything: true },
        somethingElse: 1,
      }),
    ).toBeNull();
    expect(echo.validateInput({})).toBeNull();
  });

  it("names the failing path of bad input", () => {
    const echo = registry.getByName("echo")!;
    expect(echo.validateInput({ messages: [{ role: 5 }] })).toBe(
      "input/messages/0/role must be string",
    );
    expect(echo.validateInput({ messages: [{ content: "x" }] })).toBe(
      "input/messages/0/role is required",
    );
    expect(echo.validateInput({ messages: "hi" })).toBe("input/messages must be array");
    expect(echo.validateInput([])).toBe("input must be object");
    expect(echo.validateInput({ tools: [{}] }, "body/input")).toBe(
      "body/input/tools/0/name is required",
    );
  });

  it("validates config.configurable against specs.config", async () => {
    const agent = new AgentRegistry(
      await yaml(`agents:
${agentYaml("a", "1")}    specs:
      config:
        properties: { temperature: { type: number, maximum: 2 } }
        additionalProperties: false
`),
    ).list()[0]!;
    expect(agent.validateConfig({ temperature: 1 })).toBeNull();
    expect(agent.validateConfig({ temperature: 3 })).toBe(
      "config/configurable/temperature must be <= 2",
    );
    expect(agent.validateConfig({ temp: 1 })).toBe("config/configurable/temp is not allowed");
    expect(registry.getByName("echo")!.validateConfig({ anything: [1] })).toBeNull();
  });

  it("validates resume payloads against the interrupt type's resume_payload", () => {
    const approval = registry.getByName("approval-demo")!;
    expect(approval.validateResume({ approved: true }, "approval")).toBeNull();
    expect(approval.validateResume({ approved: "yes" }, "approval")).toBe(
      "approval/approved must be boolean",
    );
    expect(approval.validateResume({}, "approval")).toBe("approval/approved is required");
    // The only declared type applies when none is named.
    expect(approval.validateResume({}, undefined, "resume/0/payload")).toBe(
      "resume/0/payload/approved is required",
    );
    // An undeclared type has no schema to check against.
    expect(approval.validateResume("anything", "question")).toBeNull();
  });

  it("checks resumes of any interrupt type against the default open object", () => {
    const echo = registry.getByName("echo")!;
    expect(echo.validateResume({ ok: true }, "approval")).toBeNull();
    expect(echo.validateResume(true, "approval")).toBe("approval must be object");
  });

  it("does not coerce or fill in values", async () => {
    const agent = new AgentRegistry(
      await yaml(`agents:
${agentYaml("a", "1")}    specs:
      config:
        properties: { n: { type: integer, default: 3 } }
`),
    ).list()[0]!;
    const data: Record<string, unknown> = {};
    expect(agent.validateConfig(data)).toBeNull();
    expect(data).toEqual({});
    expect(agent.validateConfig({ n: "3" })).toBe("config/configurable/n must be integer");
  });

  it("freezes the ACP views it hands out", () => {
    const echo = registry.getByName("echo")!;
    expect(Object.isFrozen(echo.descriptor.specs.input)).toBe(true);
    expect(Object.isFrozen(echo.agent.metadata.ref)).toBe(true);
  });
});
