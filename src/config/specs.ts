/**
 * ACP agent descriptors: the defaults every AG-UI agent gets (docs/config.md, "Descriptor
 * defaults") and the merge of a config's `specs` over them.
 */
import type {
  AgentSpecsOverrides,
  CapabilityOverrides,
  JsonSchemaObject,
  KeyPath,
} from "./schema.js";

/** ACP `AgentACPSpec.capabilities`, with every flag stated. */
export interface AcpCapabilities {
  threads: boolean;
  interrupts: boolean;
  callbacks: boolean;
  streaming: { values: boolean; custom: boolean };
}

/** One entry of ACP `AgentACPSpec.interrupts`. */
export interface AcpInterruptSpec {
  interrupt_type: string;
  interrupt_payload: JsonSchemaObject;
  resume_payload: JsonSchemaObject;
}

/** ACP `AgentACPSpec`. */
export interface AcpAgentSpecs {
  capabilities: AcpCapabilities;
  input: JsonSchemaObject;
  output: JsonSchemaObject;
  config: JsonSchemaObject;
  /** Present only when `capabilities.threads`. */
  thread_state?: JsonSchemaObject;
  /** Present only when `capabilities.streaming.custom`. */
  custom_streaming_update?: JsonSchemaObject;
  /** Present only when `capabilities.interrupts` (at least one entry, per ACP). */
  interrupts?: AcpInterruptSpec[];
}

/** ACP `AgentMetadata`. */
export interface AcpAgentMetadata {
  ref: { name: string; version: string; url?: string };
  description: string;
}

/** ACP `Agent`. */
export interface AcpAgent {
  agent_id: string;
  metadata: AcpAgentMetadata;
}

/** ACP `AgentACPDescriptor`. */
export interface AcpAgentDescriptor {
  metadata: AcpAgentMetadata;
  specs: AcpAgentSpecs;
}

/**
 * What an agent says of itself while the server runs (an A2A agent's card), refining the
 * descriptor built from the config: a `description` where the config's is empty, the record's
 * `url`, and keys added to the input and output schemas (annotations: `description`,
 * `examples`, `x-…`; never what the server validates against).
 */
export interface AgentSelfDescription {
  description?: string;
  url?: string;
  input?: JsonSchemaObject;
  output?: JsonSchemaObject;
}

/** The descriptor with what the agent says of itself merged in. */
export function refineDescriptor(
  descriptor: AcpAgentDescriptor,
  own: AgentSelfDescription,
): AcpAgentDescriptor {
  const { metadata, specs } = descriptor;
  return {
    metadata: {
      ref: { ...metadata.ref, ...(own.url ? { url: own.url } : {}) },
      description: metadata.description || own.description || "",
    },
    specs: {
      ...specs,
      input: { ...specs.input, ...own.input },
      output: { ...specs.output, ...own.output },
    },
  };
}

/** Where the server serves the bundled AG-UI schema. */
export const AG_UI_SCHEMA_PATH = "/schemas/ag-ui.schema.json";

/**
 * `interrupt_type` of the default interrupt entry: AG-UI interrupt reasons are open strings, so
 * the default entry stands for every reason (its schemas apply to any interrupt type the
 * descriptor does not list by name).
 */
export const ANY_INTERRUPT_TYPE = "*";

/**
 * The `$ref` of `custom_streaming_update`: the AG-UI `Event` schema, absolute when the
 * server's public base URL is known (`https://host:8000/schemas/ag-ui.schema.json#/$defs/Event`),
 * else the server-relative `/schemas/ag-ui.schema.json#/$defs/Event`.
 */
export function eventSchemaRef(baseUrl?: string): string {
  const base = baseUrl ? baseUrl.replace(/\/+$/, "") : "";
  return `${base}${AG_UI_SCHEMA_PATH}#/$defs/Event`;
}

/**
 * Capabilities of an AG-UI agent served by this server: threads, interrupts, webhooks and both
 * streaming modes come from the server, not the agent. An adapter type that cannot do one of
 * them passes overrides (e.g. `{ interrupts: false }`).
 */
export function defaultCapabilities(overrides: CapabilityOverrides = {}): AcpCapabilities {
  return {
    threads: overrides.threads ?? true,
    interrupts: overrides.interrupts ?? true,
    callbacks: overrides.callbacks ?? true,
    streaming: {
      values: overrides.streaming?.values ?? true,
      custom: overrides.streaming?.custom ?? true,
    },
  };
}

const openObject = (): JsonSchemaObject => ({ type: "object" });

/** The ACP `input` of an AG-UI agent: the parts of `RunAgentInput` a client supplies. */
export function defaultInputSchema(): JsonSchemaObject {
  return {
    type: "object",
    description:
      "AG-UI run input. `messages` are appended to the thread's history; `state` seeds a new " +
      "thread's state; `tools`, `context` and `forwardedProps` go to the agent unchanged.",
    properties: {
      messages: {
        type: "array",
        items: {
          type: "object",
          required: ["role"],
          properties: {
            id: { type: "string" },
            role: { type: "string" },
            content: { type: ["string", "array", "null"] },
            name: { type: "string" },
            toolCallId: { type: "string" },
            toolCalls: { type: "array" },
            metadata: { type: "object" },
          },
        },
      },
      state: {},
      tools: {
        type: "array",
        items: {
          type: "object",
          required: ["name"],
          properties: {
            name: { type: "string" },
            description: { type: "string" },
            parameters: { type: "object" },
          },
        },
      },
      context: {
        type: "array",
        items: {
          type: "object",
          properties: { description: { type: "string" }, value: { type: "string" } },
        },
      },
      forwardedProps: {},
    },
  };
}

export interface BuildSpecsOptions {
  /** Public base URL of the server, for the `custom_streaming_update` `$ref`. */
  schemaBaseUrl?: string;
  /** What the adapter type can do, before the config's `specs.capabilities`. */
  capabilities?: CapabilityOverrides;
}

/** A contradiction between the config's specs and the final capabilities. */
export interface SpecsProblem {
  /** Key path inside the agent's `specs`. */
  path: KeyPath;
  message: string;
}

/**
 * Defaults, then the adapter's capability overrides, then the config's `specs` deep-merged on
 * top (objects merge key by key; arrays and scalars replace). `custom_streaming_update` and
 * `interrupts` replace rather than merge. Keys that ACP forbids for a disabled capability are
 * left out; giving one in the config for a disabled capability is a problem.
 */
export function buildSpecs(
  overrides: AgentSpecsOverrides,
  options: BuildSpecsOptions = {},
): { specs: AcpAgentSpecs; problems: SpecsProblem[] } {
  const problems: SpecsProblem[] = [];
  const capabilities = deepMerge(
    defaultCapabilities(options.capabilities),
    overrides.capabilities ?? {},
  ) as AcpCapabilities;
  const specs: AcpAgentSpecs = {
    capabilities,
    input: deepMerge(defaultInputSchema(), overrides.input ?? {}),
    output: deepMerge(openObject(), overrides.output ?? {}),
    config: deepMerge(openObject(), overrides.config ?? {}),
  };

  const forbid = (key: keyof AgentSpecsOverrides, capability: string) => {
    if (overrides[key] !== undefined) {
      problems.push({
        path: [key],
        message: `is given but capability ${capability} is false (ACP forbids it then)`,
      });
    }
  };

  if (capabilities.threads) {
    specs.thread_state = deepMerge(openObject(), overrides.thread_state ?? {});
  } else {
    forbid("thread_state", "threads");
  }

  if (capabilities.streaming.custom) {
    specs.custom_streaming_update = overrides.custom_streaming_update ?? {
      $ref: eventSchemaRef(options.schemaBaseUrl),
    };
  } else {
    forbid("custom_streaming_update", "streaming.custom");
  }

  if (capabilities.interrupts) {
    const payload = deepMerge(openObject(), overrides.interrupt_payload ?? {});
    const resume = deepMerge(openObject(), overrides.resume_payload ?? {});
    const entries = overrides.interrupts ?? [{ interrupt_type: ANY_INTERRUPT_TYPE }];
    if (entries.length === 0) {
      problems.push({ path: ["interrupts"], message: "must list at least one interrupt type" });
    }
    const seen = new Set<string>();
    for (const [i, entry] of entries.entries()) {
      if (seen.has(entry.interrupt_type)) {
        problems.push({
          path: ["interrupts", i, "interrupt_type"],
          message: `repeats interrupt type "${entry.interrupt_type}" (must be unique)`,
        });
      }
      seen.add(entry.interrupt_type);
    }
    specs.interrupts = entries.map((entry) => ({
      interrupt_type: entry.interrupt_type,
      interrupt_payload: deepMerge(payload, entry.interrupt_payload ?? {}),
      resume_payload: deepMerge(resume, entry.resume_payload ?? {}),
    }));
  } else {
    forbid("interrupts", "interrupts");
    forbid("interrupt_payload", "interrupts");
    forbid("resume_payload", "interrupts");
  }
  return { specs, problems };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Returns a new object: `over` merged into `base`; neither argument is modified. */
export function deepMerge<T extends object>(base: T, over: object): T {
  const out: Record<string, unknown> = structuredClone(base) as Record<string, unknown>;
  for (const [key, value] of Object.entries(over)) {
    const current = Object.hasOwn(out, key) ? out[key] : undefined;
    const merged =
      isPlainObject(current) && isPlainObject(value)
        ? deepMerge(current, value)
        : structuredClone(value);
    // defineProperty, not assignment: a user key "__proto__" must stay a plain key.
    Object.defineProperty(out, key, {
      value: merged,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out as T;
}
