import { createHash } from "node:crypto";
import type { ErrorObject, ValidateFunction } from "ajv";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { v5 as uuidv5 } from "uuid";
import { userSchemaOptionsDigest, validateUserSchema } from "../validation/config-file.js";
import { ajvIssues } from "./ajv-issues.js";
import { ConfigError, type ConfigIssue } from "./errors.js";
import type {
  AgentConfig,
  CapabilityOverrides,
  JsonSchemaObject,
  KeyPath,
  LoadedConfig,
} from "./schema.js";
import {
  type AcpAgent,
  type AcpAgentDescriptor,
  type AgentSelfDescription,
  ANY_INTERRUPT_TYPE,
  buildSpecs,
  refineDescriptor,
} from "./specs.js";
import { USER_SCHEMA_AJV_OPTIONS } from "./user-schema-options.js";

export { USER_SCHEMA_AJV_OPTIONS };

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;
type Ajv = InstanceType<typeof Ajv2020>;
const META_2020 = "https://json-schema.org/draft/2020-12/schema";

/**
 * Namespace of agent ids. Never change it: `agent_id` = UUID v5 of `name@version` under this
 * namespace, so ids are the same on every restart and every replica, and clients store them.
 */
export const AGENT_ID_NAMESPACE = "d29fcdfa-20f9-44aa-8608-1bd6568818fe";

/** The ACP `agent_id` of `name@version`. */
export function agentIdFor(name: string, version: string): string {
  return uuidv5(`${name}@${version}`, AGENT_ID_NAMESPACE);
}

/** Returns null when `data` is valid, else one line naming the failing path. */
export type PayloadValidator = (data: unknown, at?: string) => string | null;

/** An agent of the registry: its config, ACP views, and validators for what clients send. */
export interface RegisteredAgent {
  readonly agentId: string;
  readonly name: string;
  readonly version: string;
  readonly config: AgentConfig;
  /** ACP `Agent` (frozen). */
  readonly agent: AcpAgent;
  /**
   * ACP `AgentACPDescriptor` (frozen): from the config, refined by what the agent says of
   * itself when it says something (see `AgentRegistry.describeWith`).
   */
  readonly descriptor: AcpAgentDescriptor;
  /**
   * Run `input` against `specs.input`, e.g. `input/messages/0/role must be string`.
   * `at` names the root in the message (default `input`).
   */
  validateInput(data: unknown, at?: string): string | null;
  /** `config.configurable` against `specs.config` (default root `config/configurable`). */
  validateConfig(data: unknown, at?: string): string | null;
  /**
   * A resume payload against the `resume_payload` of `interruptType` (falling back to the
   * `"*"` entry; without a type: the `"*"` entry, or the only entry). Null when no entry
   * applies or the agent has no interrupts. Default root: the interrupt type, else `resume`.
   */
  validateResume(data: unknown, interruptType?: string, at?: string): string | null;
}

export interface RegistryOptions {
  /** Public base URL of the server for the `custom_streaming_update` `$ref` (else relative). */
  schemaBaseUrl?: string;
  /** Capability refinements of an agent's adapter type (applied before the config's specs). */
  capabilitiesFor?: (agent: AgentConfig) => CapabilityOverrides | undefined;
}

/** ACP `AgentSearchRequest`: exact matches on name and version; limit 10, offset 0 by default. */
export interface AgentSearch {
  name?: string;
  version?: string;
  /** Only these agent ids (a caller restricted to some agents), filtered before paging. */
  agentIds?: ReadonlySet<string>;
  limit?: number;
  offset?: number;
}

/**
 * The configured agents. Building it compiles each agent's input, config and resume schemas;
 * a schema that does not compile is a ConfigError naming the agent, the key and its line.
 */
export class AgentRegistry {
  readonly #agents: RegisteredAgent[];
  readonly #byId = new Map<string, RegisteredAgent>();
  readonly #selves = new Map<string, SelfDescribed>();

  constructor(config: LoadedConfig | readonly AgentConfig[], options: RegistryOptions = {}) {
    const source = Array.isArray(config)
      ? { file: "config", agents: config as readonly AgentConfig[], locate: () => null }
      : (config as LoadedConfig);
    const issues: ConfigIssue[] = [];
    this.#agents = source.agents.map((agent) => {
      const self: SelfDescribed = {};
      this.#selves.set(agentIdFor(agent.name, agent.version), self);
      return register(agent, options, issues, source.locate, self);
    });
    if (issues.length > 0) throw new ConfigError(source.file, issues);
    for (const agent of this.#agents) {
      if (this.#byId.has(agent.agentId)) {
        throw new ConfigError(source.file, [
          {
            path: ["agents", agent.config.index],
            message: `repeats ${agent.name}@${agent.version} (name@version must be unique)`,
            position: source.locate(["agents", agent.config.index]),
          },
        ]);
      }
      this.#byId.set(agent.agentId, agent);
    }
  }

  /**
   * Where an agent's own description comes from (its adapter: an A2A agent's card, read at
   * start-up and refreshed). Read on every descriptor request; undefined leaves the config's.
   */
  describeWith(agentId: string, source: () => AgentSelfDescription | undefined): void {
    const self = this.#selves.get(agentId);
    if (self) self.source = source;
  }

  /** Every agent, in config order. */
  list(): RegisteredAgent[] {
    return [...this.#agents];
  }

  get(agentId: string): RegisteredAgent | null {
    return this.#byId.get(agentId) ?? null;
  }

  /**
   * By name and exact version; without a version, the highest version of that name by semver
   * precedence (versions that are not semver rank below those that are; on a tie, the one
   * later in the config wins).
   */
  getByName(name: string, version?: string): RegisteredAgent | null {
    if (version !== undefined) return this.get(agentIdFor(name, version));
    let best: RegisteredAgent | null = null;
    for (const agent of this.#agents) {
      if (agent.name !== name) continue;
      if (!best || compareVersions(agent.version, best.version) >= 0) best = agent;
    }
    return best;
  }

  search({ name, version, agentIds, limit = 10, offset = 0 }: AgentSearch = {}): RegisteredAgent[] {
    return this.#agents
      .filter(
        (a) =>
          (name === undefined || a.name === name) &&
          (version === undefined || a.version === version) &&
          (agentIds === undefined || agentIds.has(a.agentId)),
      )
      .slice(offset, offset + limit);
  }

  /** The agent a run without `agent_id` goes to: the only one, when exactly one is configured. */
  defaultAgent(): RegisteredAgent | null {
    return this.#agents.length === 1 ? this.#agents[0]! : null;
  }

  get size(): number {
    return this.#agents.length;
  }
}

let sharedAjv: Ajv | undefined;

/**
 * One Ajv for every agent's schemas. Sharing is safe because `addUsedSchema: false` keeps a
 * schema's `$id` from being registered on the instance, so two agents' schemas never see each
 * other. `validateSchema: false`: `checkUserSchema` has checked every schema it compiles.
 */
function userSchemaAjv(): Ajv {
  if (sharedAjv) return sharedAjv;
  const ajv = new Ajv2020({ ...USER_SCHEMA_AJV_OPTIONS, validateSchema: false });
  addFormats(ajv);
  sharedAjv = ajv;
  return ajv;
}

/**
 * Validators by schema text: agents mostly keep the default input, config and resume schemas,
 * and compiling those again for every agent cost megabytes of Ajv code generation at start-up.
 * A validator keeps no state between calls but `errors`, read right after each call.
 */
const compiledSchemas = new Map<string, ValidateFunction>();

let metaChecked = false;

/**
 * The meta-schema check of `schema`, as `ajv.validateSchema` would do it: precompiled (by
 * `npm run generate`) for the 2020-12 meta-schema, since compiling that here allocated some
 * 7 MB at every start. Undefined for a schema naming another `$schema` (or not an object),
 * which `ajv.validateSchema` handles (and refuses) as before.
 */
function metaSchemaCheck(schema: JsonSchemaObject): typeof validateUserSchema | undefined {
  if (typeof schema !== "object" || schema === null) return undefined;
  if (schema.$schema !== undefined && schema.$schema !== META_2020) return undefined;
  if (!metaChecked) {
    const digest = createHash("sha256").update(JSON.stringify(USER_SCHEMA_AJV_OPTIONS));
    if (digest.digest("hex") !== userSchemaOptionsDigest) {
      throw new Error(
        "the precompiled user schema check is out of date with USER_SCHEMA_AJV_OPTIONS: run `npm run generate`",
      );
    }
    metaChecked = true;
  }
  return validateUserSchema;
}

/** An agent's own description, and the descriptors last built from it. */
interface SelfDescribed {
  source?: () => AgentSelfDescription | undefined;
  last?: AgentSelfDescription;
  agent?: AcpAgent;
  descriptor?: AcpAgentDescriptor;
}

function register(
  config: AgentConfig,
  options: RegistryOptions,
  issues: ConfigIssue[],
  locate: LoadedConfig["locate"],
  self: SelfDescribed,
): RegisteredAgent {
  const index = config.index;
  const agentId = agentIdFor(config.name, config.version);
  const label = `${config.name}@${config.version}`;
  const specsPath: KeyPath = ["agents", index, "specs"];
  const fail = (path: KeyPath, message: string) =>
    issues.push({
      path: [...specsPath, ...path],
      message,
      position: locate([...specsPath, ...path]),
    });

  const { specs, problems } = buildSpecs(config.specs, {
    schemaBaseUrl: options.schemaBaseUrl,
    capabilities: options.capabilitiesFor?.(config),
  });
  for (const problem of problems) fail(problem.path, problem.message);

  const ajv = userSchemaAjv();

  const compile = (schema: JsonSchemaObject, key: KeyPath, what: string) =>
    compileUserSchema(ajv, schema, { key: [...specsPath, ...key], what, label, issues, locate });

  const input = compile(specs.input, ["input"], "input schema");
  const configurable = compile(specs.config, ["config"], "config schema");
  const resumeByType = new Map<string, ValidateFunction>();
  for (const [i, entry] of (specs.interrupts ?? []).entries()) {
    const own = config.specs.interrupts?.[i]?.resume_payload !== undefined;
    const key = own ? ["interrupts", i, "resume_payload"] : ["resume_payload"];
    const validate = compile(
      entry.resume_payload,
      key,
      `resume_payload of "${entry.interrupt_type}"`,
    );
    if (validate) resumeByType.set(entry.interrupt_type, validate);
  }
  // The other schemas are not used to validate anything, but a broken one is still a mistake.
  const checkOnly: [JsonSchemaObject | undefined, KeyPath, string][] = [
    [specs.output, ["output"], "output schema"],
    [specs.thread_state, ["thread_state"], "thread_state schema"],
    [config.specs.custom_streaming_update, ["custom_streaming_update"], "custom_streaming_update"],
    ...(specs.interrupts ?? []).map((e, i): [JsonSchemaObject, KeyPath, string] => [
      e.interrupt_payload,
      config.specs.interrupts?.[i]?.interrupt_payload
        ? ["interrupts", i, "interrupt_payload"]
        : ["interrupt_payload"],
      `interrupt_payload of "${e.interrupt_type}"`,
    ]),
  ];
  for (const [schema, key, what] of checkOnly) {
    if (schema)
      checkUserSchema(ajv, schema, { key: [...specsPath, ...key], what, label, issues, locate });
  }

  const metadata = {
    ref: { name: config.name, version: config.version },
    description: config.description,
  };
  const agent = deepFreeze<AcpAgent>({ agent_id: agentId, metadata: structuredClone(metadata) });
  const descriptor = deepFreeze<AcpAgentDescriptor>({ metadata, specs });
  const onlyResume = resumeByType.size === 1 ? [...resumeByType.values()][0] : undefined;

  /** Rebuilt when the agent's own description changes (a source returns a new object). */
  const refined = (): SelfDescribed | undefined => {
    const own = self.source?.();
    if (!own) return undefined;
    if (own !== self.last) {
      self.last = own;
      self.descriptor = deepFreeze(refineDescriptor(structuredClone(descriptor), own));
      self.agent = deepFreeze<AcpAgent>({
        agent_id: agentId,
        metadata: structuredClone(self.descriptor.metadata),
      });
    }
    return self;
  };

  return {
    agentId,
    name: config.name,
    version: config.version,
    config,
    get agent() {
      return refined()?.agent ?? agent;
    },
    get descriptor() {
      return refined()?.descriptor ?? descriptor;
    },
    validateInput: (data, at = "input") => validationProblem(input, data, at),
    validateConfig: (data, at = "config/configurable") => validationProblem(configurable, data, at),
    validateResume: (data, interruptType, at) => {
      const validate =
        interruptType === undefined
          ? (resumeByType.get(ANY_INTERRUPT_TYPE) ?? onlyResume)
          : (resumeByType.get(interruptType) ?? resumeByType.get(ANY_INTERRUPT_TYPE));
      return validationProblem(validate, data, at ?? interruptType ?? "resume");
    },
  };
}

interface SchemaContext {
  key: KeyPath;
  what: string;
  label: string;
  issues: ConfigIssue[];
  locate: LoadedConfig["locate"];
}

function checkUserSchema(ajv: Ajv, schema: JsonSchemaObject, context: SchemaContext): boolean {
  const precompiled = metaSchemaCheck(schema);
  const valid = precompiled ? precompiled(schema) : ajv.validateSchema(schema);
  if (valid) return true;
  const error = pickError((precompiled ? precompiled.errors : ajv.errors) ?? []);
  const issues = error
    ? ajvIssues([error], schema, { prefix: context.key, locate: context.locate })
    : [{ path: context.key, message: "is invalid", position: context.locate(context.key) }];
  for (const issue of issues) {
    context.issues.push({
      ...issue,
      message: `${issue.message}: the ${context.what} of agent ${context.label} is not a valid JSON Schema`,
    });
  }
  return false;
}

function compileUserSchema(
  ajv: Ajv,
  schema: JsonSchemaObject,
  context: SchemaContext,
): ValidateFunction | undefined {
  if (!checkUserSchema(ajv, schema, context)) return undefined;
  const key = JSON.stringify(schema);
  const known = compiledSchemas.get(key);
  if (known) return known;
  try {
    const validate = ajv.compile(schema);
    compiledSchemas.set(key, validate);
    return validate;
  } catch (err) {
    context.issues.push({
      path: context.key,
      message: `does not compile (the ${context.what} of agent ${context.label}): ${(err as Error).message}`,
      position: context.locate(context.key),
    });
    return undefined;
  }
}

/** The most specific error: alternatives and conditionals only summarise their branches. */
function pickError(errors: readonly ErrorObject[]): ErrorObject | undefined {
  const skip = new Set(["anyOf", "oneOf", "if", "$ref", "$dynamicRef"]);
  return errors.find((e) => !skip.has(e.keyword)) ?? errors[0];
}

/** Null when `data` is valid (or there is no validator), else one line naming the failing path under `at`. */
export function validationProblem(
  validate: ValidateFunction | undefined,
  data: unknown,
  at: string,
): string | null {
  if (!validate || validate(data)) return null;
  const errors = validate.errors ?? [];
  // Without allErrors the failing keyword is last; for if/then the branch's error is more useful.
  let error = errors[errors.length - 1];
  if (error?.keyword === "if" && errors.length > 1) error = errors[errors.length - 2];
  if (!error) return `${at} is invalid`;
  const params = error.params as Record<string, unknown>;
  const path = `${at}${error.instancePath}`;
  if (error.keyword === "required") return `${path}/${String(params.missingProperty)} is required`;
  if (error.keyword === "additionalProperties") {
    return `${path}/${String(params.additionalProperty)} is not allowed`;
  }
  return `${path} ${error.message ?? "is invalid"}`;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

const SEMVER = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/** Semver precedence; a version that is not semver sorts below every one that is. */
export function compareVersions(a: string, b: string): number {
  const pa = SEMVER.exec(a);
  const pb = SEMVER.exec(b);
  if (!pa || !pb) return pa ? 1 : pb ? -1 : 0;
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return Math.sign(d);
  }
  const ra = pa[4];
  const rb = pb[4];
  if (ra === undefined || rb === undefined) return ra === rb ? 0 : ra === undefined ? 1 : -1;
  const xa = ra.split(".");
  const xb = rb.split(".");
  for (let i = 0; i < Math.max(xa.length, xb.length); i++) {
    const x = xa[i];
    const y = xb[i];
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny && Number(x) !== Number(y)) return Math.sign(Number(x) - Number(y));
    if (nx !== ny) return nx ? -1 : 1;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}
