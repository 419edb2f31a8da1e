/**
 * Type-level checks, run by `tsc --noEmit` (not by vitest): the generated ACP schema literals
 * type route bodies through json-schema-to-ts without hitting "type instantiation is
 * excessively deep", and the types they give are precise, not `unknown`.
 */
import type { FromSchema } from "json-schema-to-ts";
import { expectTypeOf } from "vitest";
import type { AcpSchemas } from "../../src/validation/index.js";

type ThreadCreate = FromSchema<AcpSchemas["ThreadCreate"]>;
type RunCreateStateful = FromSchema<AcpSchemas["RunCreateStateful"]>;
type ThreadPatch = FromSchema<AcpSchemas["ThreadPatch"]>;
type ThreadSearchRequest = FromSchema<AcpSchemas["ThreadSearchRequest"]>;

export const threadCreate: ThreadCreate = {
  thread_id: "8b0d2d4e-6b0a-4b8e-9f7c-2b3c4d5e6f70",
  metadata: { owner: "me" },
  if_exists: "do_nothing",
};
// @ts-expect-error if_exists is an enum
export const badThreadCreate: ThreadCreate = { if_exists: "overwrite" };
expectTypeOf<ThreadCreate["if_exists"]>().toEqualTypeOf<"raise" | "do_nothing" | undefined>();

export const runCreate: RunCreateStateful = {
  agent_id: "a",
  input: { messages: [] },
  config: { tags: ["x"], recursion_limit: 3, configurable: {} },
  stream_mode: ["values", "custom"],
  on_disconnect: "continue",
  multitask_strategy: "enqueue",
  if_not_exists: "create",
  stream_subgraphs: false,
  after_seconds: 5,
};
export const runCreateSingleMode: RunCreateStateful = { stream_mode: "values" };
export const runCreateNullMode: RunCreateStateful = { stream_mode: null };
// @ts-expect-error stream_mode values are "values" | "custom"
export const badRunCreate: RunCreateStateful = { stream_mode: ["tokens"] };
// @ts-expect-error multitask_strategy is an enum
export const badStrategy: RunCreateStateful = { multitask_strategy: "queue" };

export const threadPatch: ThreadPatch = {
  checkpoint: { checkpoint_id: "8b0d2d4e-6b0a-4b8e-9f7c-2b3c4d5e6f70" },
  metadata: {},
  values: { count: 1 },
  messages: [
    { role: "user", content: "hi" },
    { role: "assistant", content: [{ type: "text", text: "hello" }] },
  ],
};
// @ts-expect-error a checkpoint needs its checkpoint_id
export const badPatch: ThreadPatch = { checkpoint: {} };

export const threadSearch: ThreadSearchRequest = { status: "idle", limit: 10, offset: 0 };
// @ts-expect-error status is a ThreadStatus
export const badSearch: ThreadSearchRequest = { status: "sleeping" };
expectTypeOf<ThreadSearchRequest["limit"]>().toEqualTypeOf<number | undefined>();

/** Every generated schema types without error (the deepest: RunWaitResponseStateful). */
type All = { [K in keyof AcpSchemas]: FromSchema<AcpSchemas[K]> };
expectTypeOf<All["RunWaitResponseStateful"]["run"]>().not.toBeAny();
expectTypeOf<All["RunStatelessList"]>().toBeArray();
expectTypeOf<All["RunOutput"]>().toHaveProperty("type");
expectTypeOf<All["ErrorResponse"]>().toEqualTypeOf<string>();
export type AllAcpTypes = All;
expectTypeOf<All[keyof All]>().not.toBeAny();
