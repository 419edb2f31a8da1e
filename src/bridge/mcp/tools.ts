/**
 * Agents as MCP tools: the tool an agent is (its name, description and schemas), and a tool
 * call's arguments as the run input the agent takes. Pure functions, no HTTP.
 */
import { isObject } from "../acp/values.js";

/** What of an agent's ACP descriptor makes its tool (config/specs.ts has the whole). */
export interface AcpAgentDescriptor {
  metadata: { description: string };
  specs: { input: Record<string, unknown>; output: Record<string, unknown> };
}

/** An MCP `Tool` as this server lists it (MCP 2025-11-25 `Tool`). */
export interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** What an agent needs to be listed and called as a tool. */
export interface ToolAgent {
  name: string;
  version: string;
  descriptor: AcpAgentDescriptor;
}

/** The `context` argument every tool takes: the conversation a call continues. */
const CONTEXT_PROPERTY = {
  type: "string",
  minLength: 1,
  maxLength: 300,
  description:
    "A conversation id of your choosing: calls with the same context continue one conversation " +
    "(the agent sees what was said before). Leave it out for a call on its own.",
};

/** MCP tool names: 1 to 128 of A-Z, a-z, 0-9, `_`, `-` and `.` (2025-11-25, Tool names). */
export function toolNameOf(agentName: string): string {
  const name = agentName.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 128);
  return name === "" ? "_" : name;
}

/**
 * Whether the agent takes messages (AG-UI run input with `messages`): its tool then takes one
 * `message`, sent as the user's; otherwise the tool's arguments are the agent's own input.
 */
export function takesMessages(descriptor: AcpAgentDescriptor): boolean {
  const properties = descriptor.specs.input.properties;
  return isObject(properties) && "messages" in properties;
}

/**
 * The agent's declared output schema, when it declares one: the default (an open object)
 * declares nothing, and MCP clients would check every result against what is listed.
 */
export function declaredOutputSchema(
  descriptor: AcpAgentDescriptor,
): Record<string, unknown> | undefined {
  const output = descriptor.specs.output;
  const keys = Object.keys(output).filter((key) => key !== "type" && key !== "description");
  if (keys.length === 0 || output.type !== "object") return undefined;
  return output;
}

/** The tool an agent is. */
export function toolOf(agent: ToolAgent): McpTool {
  const { descriptor } = agent;
  const description = descriptor.metadata.description || `The ${agent.name} agent.`;
  const inputSchema = takesMessages(descriptor)
    ? {
        type: "object",
        properties: {
          message: {
            type: "string",
            minLength: 1,
            description: `What to say to the ${agent.name} agent.`,
          },
          context: CONTEXT_PROPERTY,
        },
        required: ["message"],
        additionalProperties: false,
      }
    : {
        ...descriptor.specs.input,
        type: "object",
        properties: {
          ...((descriptor.specs.input.properties as Record<string, unknown> | undefined) ?? {}),
          context: CONTEXT_PROPERTY,
        },
      };
  const outputSchema = declaredOutputSchema(descriptor);
  return {
    name: toolNameOf(agent.name),
    title: `${agent.name} ${agent.version}`,
    description,
    inputSchema,
    ...(outputSchema ? { outputSchema } : {}),
    annotations: { openWorldHint: true },
  };
}

/** Why a call's arguments cannot be a run (an MCP InvalidParams). */
export class ToolArgumentsError extends Error {}

/**
 * A call's arguments as the agent's run input and the conversation it continues: a message
 * agent gets `message` as a user message; any other agent its arguments without `context`.
 */
export function runInputOf(
  descriptor: AcpAgentDescriptor,
  args: Record<string, unknown> | undefined,
  messageId: string,
): { input: Record<string, unknown>; context?: string } {
  const given = args ?? {};
  const context = given.context;
  if (context !== undefined && (typeof context !== "string" || context === "")) {
    throw new ToolArgumentsError("arguments.context must be a non-empty string");
  }
  if (typeof context === "string" && context.length > 300) {
    throw new ToolArgumentsError("arguments.context must be at most 300 characters");
  }
  if (takesMessages(descriptor)) {
    const extra = Object.keys(given).filter((key) => key !== "message" && key !== "context");
    if (extra.length > 0) {
      throw new ToolArgumentsError(
        `unknown argument ${JSON.stringify(extra[0]!.slice(0, 100))}: this tool takes message and context`,
      );
    }
    if (typeof given.message !== "string" || given.message === "") {
      throw new ToolArgumentsError("arguments.message must be a non-empty string");
    }
    return {
      input: { messages: [{ id: messageId, role: "user", content: given.message }] },
      ...(context ? { context } : {}),
    };
  }
  const { context: _context, ...input } = given;
  return { input, ...(context ? { context } : {}) };
}
