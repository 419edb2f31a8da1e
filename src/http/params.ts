/**
 * Path and query schemas. These are ours (the spec's parameters, copied), so they are compiled
 * at start-up with coercion of strings; bodies use the precompiled ACP validators instead.
 */
const uuid = { type: "string", format: "uuid" } as const;

export const agentIdParams = {
  type: "object",
  properties: { agent_id: uuid },
  required: ["agent_id"],
} as const;

export const threadIdParams = {
  type: "object",
  properties: { thread_id: uuid },
  required: ["thread_id"],
} as const;

export const runIdParams = {
  type: "object",
  properties: { run_id: uuid },
  required: ["run_id"],
} as const;

export const threadRunParams = {
  type: "object",
  properties: { thread_id: uuid, run_id: uuid },
  required: ["thread_id", "run_id"],
} as const;

export const historyQuery = {
  type: "object",
  properties: {
    limit: { type: "integer", minimum: 1, maximum: 1000, default: 10 },
    before: uuid,
  },
  additionalProperties: false,
} as const;

export const pageQuery = {
  type: "object",
  properties: {
    limit: { type: "integer", minimum: 1, maximum: 1000, default: 10 },
    offset: { type: "integer", minimum: 0, default: 0 },
  },
  additionalProperties: false,
} as const;

export const cancelQuery = {
  type: "object",
  properties: {
    wait: { type: "boolean", default: false },
    action: { type: "string", enum: ["interrupt", "rollback"], default: "interrupt" },
  },
  additionalProperties: false,
} as const;
