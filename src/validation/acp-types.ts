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
