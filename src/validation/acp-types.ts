import type { FromSchema } from "json-schema-to-ts";
import type { AcpSchemas } from "./generated/acp-schemas.js";

/** ACP wire types, derived from the same schema literals the routes validate with. */
export type AcpThread = FromSchema<AcpSchemas["Thread"]>;
export type AcpThreadState = FromSchema<AcpSchemas["ThreadState"]>;
export type AcpRun = FromSchema<AcpSchemas["RunStateful"]>;
export type AcpMessageWire = FromSchema<AcpSchemas["Message"]>;
export type AcpRunOutput = FromSchema<AcpSchemas["RunOutput"]>;
export type AcpAgentWire = FromSchema<AcpSchemas["Agent"]>;
export type AcpDescriptorWire = FromSchema<AcpSchemas["AgentACPDescriptor"]>;
export type AcpWaitResponse = FromSchema<AcpSchemas["RunWaitResponseStateful"]>;

/** ACP thread and run statuses, as the protocol names them. */
export type ThreadStatus = "idle" | "busy" | "interrupted" | "error";
export type RunStatus = "pending" | "error" | "success" | "timeout" | "interrupted";

/** An ACP `Message` (role + content, optional id and metadata, open for more keys). */
export type AcpMessage = Record<string, unknown> & { role: string; content: unknown };
