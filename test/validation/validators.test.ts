import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { beforeAll, describe, expect, it } from "vitest";
import {
  type AcpSchemaName,
  acpOperations,
  acpSchemas,
  acpValidator,
  aguiEventTypes,
  aguiEventValidator,
  aguiKnownFields,
  aguiValidator,
  describeErrors,
  validatorById,
} from "../../src/validation/index.js";

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const corpusDir = path.resolve(repoRoot, "test/fixtures/ag-ui-conformance");
const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"));

const UUID = "8b0d2d4e-6b0a-4b8e-9f7c-2b3c4d5e6f70";
const NOW = "2025-01-01T00:00:00Z";

/** Runs a validator and returns its verdict and described errors together. */
function check(name: AcpSchemaName, data: unknown) {
  const validate = acpValidator(name);
  const ok = validate(data);
  return { ok, message: ok ? "" : describeErrors(validate.errors, "body") };
}

describe("ACP validators", () => {
  it("ThreadCreate accepts an empty body and a full one", () => {
    expect(check("ThreadCreate", {}).ok).toBe(true);
    const full = { thread_id: UUID, metadata: { a: 1 }, if_exists: "do_nothing" };
    expect(check("ThreadCreate", full).ok).toBe(true);
  });

  it("ThreadCreate rejects a thread_id that is not a uuid, naming thread_id", () => {
    const { ok, message } = check("ThreadCreate", { thread_id: "thread-1" });
    expect(ok).toBe(false);
    expect(message).toBe('body/thread_id must match format "uuid"');
  });

  it("ThreadCreate rejects an unknown if_exists and lists the allowed values", () => {
    const { ok, message } = check("ThreadCreate", { if_exists: "overwrite" });
    expect(ok).toBe(false);
    expect(message).toBe(
      'body/if_exists must be equal to one of the allowed values: "raise", "do_nothing"',
    );
  });

  it("validation neither writes defaults nor coerces nor removes anything", () => {
    const body = { metadata: { x: 1 }, extra: true };
    expect(check("ThreadCreate", body).ok).toBe(true);
    expect(body).toEqual({ metadata: { x: 1 }, extra: true });
    expect(check("AgentSearchRequest", { limit: "10" }).message).toBe("body/limit must be integer");
  });

  it("RunCreateStateless accepts stream_mode as a list, a single mode or null, and names a bad mode", () => {
    for (const stream_mode of [["values", "custom"], "values", null, []]) {
      expect(check("RunCreateStateless", { agent_id: "a", stream_mode }).ok).toBe(true);
    }
    expect(check("RunCreateStateless", { stream_mode: ["tokens"] }).message).toBe(
      'body/stream_mode/0 must be equal to one of the allowed values: "values", "custom"',
    );
    expect(check("RunCreateStateless", { stream_mode: 1 }).message).toBe(
      "body/stream_mode must be array or string or null",
    );
  });

  it("RunCreateStateful checks its own fields and those of RunCreate", () => {
    expect(check("RunCreateStateful", { if_not_exists: "create", after_seconds: 2 }).ok).toBe(true);
    expect(check("RunCreateStateful", { if_not_exists: "maybe" }).ok).toBe(false);
    expect(check("RunCreateStateful", { webhook: "" }).message).toBe(
      "body/webhook must NOT have fewer than 1 characters",
    );
  });

  it("AgentSearchRequest rejects limit 0 and limit 1001", () => {
    expect(check("AgentSearchRequest", { limit: 0 }).message).toBe("body/limit must be >= 1");
    expect(check("AgentSearchRequest", { limit: 1001 }).message).toBe("body/limit must be <= 1000");
    expect(check("AgentSearchRequest", { limit: 1000, offset: 0 }).ok).toBe(true);
  });

  it("RunOutput dispatches on type (discriminator without mapping)", () => {
    expect(check("RunOutput", { type: "result", values: {}, messages: [] }).ok).toBe(true);
    expect(check("RunOutput", { type: "interrupt", interrupt: { approval: {} } }).ok).toBe(true);
    const error = { type: "error", run_id: UUID, errcode: 500, description: "boom" };
    expect(check("RunOutput", error).ok).toBe(true);
    expect(check("RunOutput", { ...error, errcode: "E" }).message).toBe(
      "body/errcode must be integer",
    );
    expect(check("RunOutput", { type: "partial" }).message).toBe(
      'body/type must be a known value, not "partial"',
    );
    expect(check("RunOutput", {}).message).toBe("body must have required property 'type'");
    expect(check("RunOutput", "result").ok).toBe(false);
  });

  it("Run, now typed as an object, rejects non-objects", () => {
    const run = {
      run_id: UUID,
      agent_id: UUID,
      created_at: NOW,
      updated_at: NOW,
      status: "success",
    };
    expect(check("Run", run).ok).toBe(true);
    expect(check("Run", "run").ok).toBe(false);
    expect(check("RunStateless", { ...run, creation: { agent_id: "a" } }).ok).toBe(true);
    expect(check("RunStateful", { ...run, status: "done", creation: {} }).ok).toBe(false);
  });

  it("RunOutputStream accepts a values frame and a custom frame", () => {
    const values = { type: "values", run_id: UUID, status: "pending", values: {} };
    const custom = { type: "custom", status: "pending", update: { type: "RUN_STARTED" } };
    for (const data of [values, custom]) {
      expect(check("RunOutputStream", { id: "1", event: "agent_event", data }).ok).toBe(true);
    }
    const bad = { id: "1", event: "agent_event", data: { ...values, status: "running" } };
    expect(check("RunOutputStream", bad).message).toMatch(/^body\/data\/status must be equal to/);
  });

  it("Thread messages follow the ACP Message shape", () => {
    const thread = {
      thread_id: "t",
      created_at: NOW,
      updated_at: NOW,
      metadata: {},
      status: "idle",
    };
    const messages = [
      { role: "user", content: "hi" },
      { role: "assistant", content: [{ type: "text", text: "hello" }, { type: "image" }] },
    ];
    expect(check("Thread", { ...thread, messages }).ok).toBe(true);
    expect(check("Thread", { ...thread, messages: [{ role: "user" }] }).message).toBe(
      "body/messages/0 must have required property 'content'",
    );
    expect(check("Thread", { ...thread, messages: [{ role: "user", content: 5 }] }).message).toBe(
      "body/messages/0/content must be string or array",
    );
  });

  it("ErrorResponse is a string", () => {
    expect(check("ErrorResponse", "thread t not found").ok).toBe(true);
    expect(check("ErrorResponse", { detail: "x" }).ok).toBe(false);
  });

  it("list responses validate each item", () => {
    expect(check("ThreadStateList", []).ok).toBe(true);
    const state = { checkpoint: { checkpoint_id: UUID }, values: {} };
    expect(check("ThreadStateList", [state]).ok).toBe(true);
    expect(check("ThreadStateList", [{ values: {} }]).message).toBe(
      "body/0 must have required property 'checkpoint'",
    );
    expect(check("AgentList", {}).ok).toBe(false);
  });

  it("every schema literal has $id acp:<name>, resolving to its precompiled validator", () => {
    for (const [name, schema] of Object.entries(acpSchemas)) {
      expect(schema.$id).toBe(`acp:${name}`);
      expect(validatorById(schema.$id)).toBe(acpValidator(name as AcpSchemaName));
      expect(JSON.stringify(schema)).not.toContain('"$ref"');
    }
  });

  it("every operation's body and response schemas are generated", () => {
    const names = new Set(Object.keys(acpSchemas));
    for (const [operationId, op] of Object.entries(acpOperations)) {
      const used = [
        "body" in op ? op.body : undefined,
        ...Object.values(op.responses).map((r) => r?.schema),
      ];
      for (const name of used.filter((n) => n !== undefined)) {
        expect(names.has(name), `${operationId} uses ${name}`).toBe(true);
      }
    }
    expect(acpOperations.search_threads.responses[200].schema).toBe("ThreadList");
    expect(acpOperations.get_thread_history.responses[200].schema).toBe("ThreadStateList");
  });

  it("looks validators up by id and refuses unknown names", () => {
    expect(validatorById("acp:Nope")).toBeUndefined();
    expect(validatorById("ThreadCreate")).toBeUndefined();
    expect(validatorById("agui:RunAgentInput")).toBe(aguiValidator("RunAgentInput"));
    expect(() => acpValidator("Nope" as AcpSchemaName)).toThrow(/unknown ACP schema "Nope"/);
    expect(() => acpValidator("toString" as AcpSchemaName)).toThrow();
  });
});

describe("generated modules", () => {
  it("load only Ajv's runtime helpers and ajv-formats' format functions: nothing compiles", () => {
    const dir = path.join(repoRoot, "src/validation/generated");
    for (const file of ["acp-validators.cjs", "agui-validators.cjs"]) {
      const code = readFileSync(path.join(dir, file), "utf8");
      const required = [...code.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]);
      for (const id of required) expect(id).toMatch(/^(ajv\/dist\/runtime\/|ajv-formats\/dist\/)/);
    }
  });
});

// -------------------------------------------------------------------------------------------
// AG-UI

interface Fixture {
  stream: unknown[];
  input?: unknown;
}
const fixtures = readdirSync(corpusDir)
  .filter((f) => f.endsWith(".json"))
  .map((f) => ({ name: f, ...(readJson(path.join(corpusDir, f)) as Fixture) }));
const corpusEvents = fixtures.flatMap((f) => f.stream);

const aguiDocument = readJson(path.join(repoRoot, "schemas/ag-ui.schema.json"));
const ANCHOR_BASE = `${aguiDocument.$id}#`;

/** The bundled document compiled as it is, without the build's discriminators. */
function compileUndiscriminated(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: false, keywords: ["$anchor"] });
  addFormats(ajv);
  ajv.addSchema(aguiDocument);
  return ajv;
}

/** Every string a `type`, `role` or `op` property is pinned to anywhere in the schema. */
function tagValues(): Record<string, Set<string>> {
  const pools: Record<string, Set<string>> = { type: new Set(), role: new Set(), op: new Set() };
  const visit = (node: unknown) => {
    if (!node || typeof node !== "object") return;
    const properties = (node as { properties?: Record<string, { const?: unknown }> }).properties;
    for (const [tag, pool] of Object.entries(pools)) {
      const value = properties?.[tag]?.const;
      if (typeof value === "string") pool.add(value);
    }
    for (const child of Object.values(node)) visit(child);
  };
  visit(aguiDocument);
  return pools;
}

/**
 * The value itself plus, for every object inside it (the value included): its `type`, `role`
 * and `op` set to every value the schema knows, to an unknown value and to a number, or
 * removed; and an unknown extra property. That walks every discriminated `oneOf` down every
 * branch.
 */
function variants(value: unknown, pools: Record<string, Set<string>>): unknown[] {
  const out: unknown[] = [value];
  const paths: (string | number)[][] = [];
  const collect = (node: unknown, at: (string | number)[]) => {
    if (!node || typeof node !== "object") return;
    if (!Array.isArray(node)) paths.push(at);
    for (const [k, v] of Object.entries(node))
      collect(v, [...at, Array.isArray(node) ? Number(k) : k]);
  };
  collect(value, []);
  const edit = (at: (string | number)[], change: (node: Record<string, unknown>) => void) => {
    const copy = structuredClone(value);
    let node = copy as Record<string | number, unknown>;
    for (const step of at) node = node[step] as Record<string | number, unknown>;
    change(node as Record<string, unknown>);
    out.push(copy);
  };
  for (const at of paths) {
    edit(at, (node) => {
      node.zzUnknown = true;
    });
    for (const [tag, pool] of Object.entries(pools)) {
      edit(at, (node) => {
        delete node[tag];
      });
      for (const tagValue of [...pool, "NOT_A_KNOWN_VALUE", 7]) {
        edit(at, (node) => {
          node[tag] = tagValue;
        });
      }
    }
  }
  return out;
}

describe("AG-UI validators", () => {
  let plain: Ajv2020;
  beforeAll(() => {
    plain = compileUndiscriminated();
  });
  const plainValidator = (anchor: string) =>
    plain.getSchema(`${ANCHOR_BASE}${anchor}`) as ValidateFunction;

  it("the corpus holds both schema-valid and schema-invalid events", () => {
    const Event = aguiValidator("Event");
    const valid = corpusEvents.filter((e) => Event(e)).length;
    expect(corpusEvents.length).toBeGreaterThan(100);
    expect(valid).toBeGreaterThan(100);
    expect(valid).toBeLessThan(corpusEvents.length);
  });

  it("the discriminated Event gives the same verdict as the bundled schema on every corpus event and its variants", () => {
    const discriminated = aguiValidator("Event");
    const undiscriminated = plainValidator("Event");
    const pools = tagValues();
    const samples = [
      ...corpusEvents.flatMap((e) => variants(e, pools)),
      "RUN_STARTED",
      1,
      null,
      [],
    ];
    let invalid = 0;
    for (const sample of samples) {
      const verdict = undiscriminated(sample);
      if (!verdict) invalid++;
      expect(discriminated(sample), JSON.stringify(sample)).toBe(verdict);
    }
    expect(invalid).toBeGreaterThan(samples.length / 2);
  });

  it("RunAgentInput (discriminated messages) agrees with the bundled schema on the corpus inputs", () => {
    const pools = tagValues();
    const inputs = fixtures.flatMap((f) => (f.input === undefined ? [] : variants(f.input, pools)));
    expect(inputs.length).toBeGreaterThan(0);
    for (const input of inputs) {
      expect(aguiValidator("RunAgentInput")(input)).toBe(plainValidator("RunAgentInput")(input));
    }
  });

  it("each event type's own validator agrees with Event", () => {
    const Event = aguiValidator("Event");
    for (const event of corpusEvents.flatMap((e) => variants(e, { type: new Set() }))) {
      const type = (event as { type?: unknown }).type;
      const own = typeof type === "string" ? aguiEventValidator(type) : undefined;
      if (own) expect(own(event)).toBe(Event(event));
    }
    expect(aguiEventValidator("NOT_AN_EVENT")).toBeUndefined();
  });

  it("lists every event type and its known fields, inherited ones included", () => {
    expect(aguiEventTypes.size).toBe(31);
    expect(aguiEventTypes.has("TEXT_MESSAGE_START")).toBe(true);
    expect([...(aguiKnownFields("TEXT_MESSAGE_START") ?? [])].sort()).toEqual([
      "messageId",
      "metadata",
      "name",
      "rawEvent",
      "role",
      "subagentRunId",
      "timestamp",
      "type",
    ]);
    // Run-scoped events are not Attributable.
    expect(aguiKnownFields("RUN_STARTED")?.has("subagentRunId")).toBe(false);
    expect(aguiKnownFields("NOT_AN_EVENT")).toBeUndefined();
  });

  it("an event stripped to its known fields loses only what the schema rejected", () => {
    const Event = aguiValidator("Event");
    for (const event of corpusEvents as Record<string, unknown>[]) {
      const known = aguiKnownFields(String(event.type));
      if (!known) continue;
      const stripped = Object.fromEntries(Object.entries(event).filter(([k]) => known.has(k)));
      if (Event(event)) expect(stripped).toEqual(event);
      expect(Event({ ...stripped, zzUnknown: 1 })).toBe(false);
    }
  });
});

describe("describeErrors", () => {
  const describeEvent = (event: unknown) => {
    const Event = aguiValidator("Event");
    expect(Event(event)).toBe(false);
    return describeErrors(Event.errors, "event");
  };

  it("names the malformed field of a known event", () => {
    const event = { type: "TEXT_MESSAGE_CONTENT", messageId: "m-1", delta: 42 };
    expect(describeEvent(event)).toBe("event/delta must be string");
  });

  it("names an unknown field, an unknown type and a missing type", () => {
    expect(describeEvent({ type: "TEXT_MESSAGE_END", messageId: "m", foo: 1 })).toBe(
      "event must NOT have unevaluated property 'foo'",
    );
    expect(describeEvent({ type: "NOPE" })).toBe('event/type must be a known value, not "NOPE"');
    expect(describeEvent({ messageId: "m" })).toBe("event must have required property 'type'");
  });

  it("names an additional property, deduplicates, and counts what it leaves out", () => {
    const extra = {
      keyword: "additionalProperties",
      instancePath: "",
      params: { additionalProperty: "foo" },
    };
    expect(describeErrors([extra, extra], "body")).toBe(
      "body must NOT have additional property 'foo'",
    );
    const many = ["a", "b", "c", "d", "e"].map((p) => ({
      keyword: "required",
      instancePath: "/x",
      params: { missingProperty: p },
      message: `must have required property '${p}'`,
    }));
    expect(describeErrors(many, "body")).toBe(
      "body/x must have required property 'a'; body/x must have required property 'b'; " +
        "body/x must have required property 'c' (and 2 more)",
    );
  });

  it("defaults the root to data and survives missing errors", () => {
    expect(describeErrors(null)).toBe("data is invalid");
    expect(
      describeErrors([
        { keyword: "type", instancePath: "/a", params: {}, message: "must be string" },
      ]),
    ).toBe("data/a must be string");
  });
});
