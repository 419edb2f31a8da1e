/**
 * The run command: what an ACP run-creation body asks for, parsed once into typed fields.
 *
 * Both the ACP routes (their validated body) and the AG-UI face (see agui-command.ts) make one;
 * the run service records it, the executor and the recorder act on it. Storage keeps the body
 * as the client sent it (the run's ACP `creation`, returned as is); a run taken over by another
 * replica or recovered after a restart parses the same command from that stored body again, so
 * this file is the only one that reads a run body by key.
 */
import { isObject } from "./values.js";

export type MultitaskStrategy = "reject" | "enqueue" | "interrupt" | "rollback";

/**
 * The face a run was started from: each face names itself on the commands it builds
 * (`parseRunCommand(body, face)`, `aguiRunCommand(input, { face })`), the run is stored with it
 * (`RunRecord.face`, in the run's own insert) and the inspector shows it. A new face adds its
 * name here.
 */
export type RunFace = "acp" | "agui" | "copilotkit" | "a2a" | "mcp" | "langgraph";

/** The run-creation body as the ACP schema types it (RunCreateStateful or RunCreateStateless). */
export interface RunCreateBody {
  agent_id?: string;
  input?: { [key: string]: unknown };
  metadata?: { [key: string]: unknown };
  config?: AcpRunConfig;
  webhook?: string;
  stream_mode?: readonly string[] | string | null;
  on_disconnect?: "cancel" | "continue";
  multitask_strategy?: MultitaskStrategy;
  after_seconds?: number;
  stream_subgraphs?: boolean;
  if_not_exists?: "create" | "reject";
  on_completion?: "delete" | "keep";
  [key: string]: unknown;
}

/** ACP `Config`: what the adapter receives as its run config. */
export interface AcpRunConfig {
  tags?: string[];
  recursion_limit?: number;
  configurable?: Record<string, unknown>;
}

/** The parts of ACP `input` the bridge maps to AG-UI (an agent's input schema may add others). */
export interface RunCommandInput {
  /** The input as given (`{}` when absent): what the agent's input schema validates. */
  value: unknown;
  /** ACP messages to add to the thread, as given (mapped to AG-UI when the run starts). */
  messages?: unknown[];
  tools?: unknown[];
  context?: unknown[];
  /** AG-UI state the input carries; `undefined` when it carries none. */
  state?: unknown;
  forwardedProps?: Record<string, unknown>;
}

/**
 * The AG-UI client a run was made for (runs made through the AG-UI face): its own ids for the
 * thread and run. Such a client owns its state: what it sends wins over the thread's.
 */
export interface AguiOrigin {
  threadId?: string;
  runId?: string;
}

export interface RunCommand {
  /**
   * The body as the client sent it: what storage keeps (the run's ACP `creation`) and ACP
   * returns. Opaque to everything but this parser and storage.
   */
  creation: Record<string, unknown>;
  /** The agent named, if any (the only agent otherwise). */
  agentId?: string;
  input: RunCommandInput;
  config?: AcpRunConfig;
  metadata: Record<string, unknown>;
  webhook?: string;
  /** The stream modes requested, if any (a single mode is a list of one). */
  streamMode?: string[];
  streamSubgraphs: boolean;
  onDisconnect: "cancel" | "continue";
  onCompletion: "delete" | "keep";
  multitaskStrategy: MultitaskStrategy;
  ifNotExists: "create" | "reject";
  /** As given; the service bounds it. */
  afterSeconds?: number;
  agui?: AguiOrigin;
  /** The face that built the command; absent on a command parsed from a stored run. */
  face?: RunFace;
}

/** A command as a face hands it to the run service: naming the face, which the run keeps. */
export type FaceRunCommand = RunCommand & { face: RunFace };

/** The key under which a run made through the AG-UI face keeps its origin in the stored body. */
const AGUI_KEY = "agui";

/**
 * Parses a run-creation body: a route's validated body, or a run's stored `creation` (also
 * those written by older versions). Fields of the wrong type read as absent. A face building a
 * run names itself (`face`); a stored body is parsed without.
 */
export function parseRunCommand(body: RunCreateBody | Record<string, unknown>): RunCommand;
export function parseRunCommand(
  body: RunCreateBody | Record<string, unknown>,
  face: RunFace,
): FaceRunCommand;
export function parseRunCommand(
  body: RunCreateBody | Record<string, unknown>,
  face?: RunFace,
): RunCommand {
  const command: RunCommand = {
    creation: body,
    input: parseInput(body.input),
    metadata: isObject(body.metadata) ? body.metadata : {},
    streamSubgraphs: body.stream_subgraphs === true,
    onDisconnect: body.on_disconnect === "continue" ? "continue" : "cancel",
    onCompletion: (body.on_completion ?? "delete") === "delete" ? "delete" : "keep",
    multitaskStrategy: (body.multitask_strategy as MultitaskStrategy | undefined) ?? "reject",
    ifNotExists: body.if_not_exists === "create" ? "create" : "reject",
  };
  if (typeof body.agent_id === "string") command.agentId = body.agent_id;
  if (isObject(body.config)) command.config = body.config as AcpRunConfig;
  if (typeof body.webhook === "string") command.webhook = body.webhook;
  const modes = body.stream_mode;
  if (Array.isArray(modes)) command.streamMode = modes.map(String);
  else if (modes !== undefined && modes !== null) command.streamMode = [String(modes)];
  if (typeof body.after_seconds === "number") command.afterSeconds = body.after_seconds;
  const agui = body[AGUI_KEY];
  if (agui !== undefined) command.agui = parseOrigin(agui);
  if (face !== undefined) command.face = face;
  return command;
}

/**
 * The command of a run made for an AG-UI client: its origin is kept with the stored body, under
 * the key rows of older versions have it too.
 */
export function withAguiOrigin<C extends RunCommand>(command: C, origin: Required<AguiOrigin>): C {
  const agui = { threadId: origin.threadId, runId: origin.runId };
  return { ...command, agui, creation: { ...command.creation, [AGUI_KEY]: agui } };
}

/**
 * The frame modes a stream of the run delivers (besides "final", always sent): the requested
 * modes (default values), and with custom the subagents' frames too when `stream_subgraphs` is
 * true — or, for stateless runs, which have no such option, always.
 */
export function deliveredModes(command: RunCommand, kind: "stateful" | "stateless"): Set<string> {
  const requested = command.streamMode;
  const modes = new Set(requested && requested.length > 0 ? requested : ["values"]);
  if (modes.has("custom") && (kind === "stateless" || command.streamSubgraphs)) {
    modes.add("subagent");
  }
  return modes;
}

/** The `configurable` part of the config, which the agent's config schema validates. */
export function configurableOf(command: RunCommand): unknown {
  return command.config?.configurable;
}

function parseInput(given: unknown): RunCommandInput {
  const value = given ?? {};
  const input: RunCommandInput = { value };
  if (!isObject(value)) return input;
  if (Array.isArray(value.messages)) input.messages = value.messages;
  if (Array.isArray(value.tools)) input.tools = value.tools;
  if (Array.isArray(value.context)) input.context = value.context;
  if (value.state !== undefined) input.state = value.state;
  if (isObject(value.forwardedProps)) input.forwardedProps = value.forwardedProps;
  return input;
}

function parseOrigin(value: unknown): AguiOrigin {
  const origin: AguiOrigin = {};
  if (!isObject(value)) return origin;
  if (typeof value.threadId === "string") origin.threadId = value.threadId;
  if (typeof value.runId === "string") origin.runId = value.runId;
  return origin;
}
