/**
 * The AG-UI event pipeline: validate → expand chunks → verify order → accumulate.
 * Engine-agnostic (no HTTP, storage or ACP routes; the ACP mapping is src/bridge's). See
 * segment.ts for the usage contract.
 */
export { Accumulator } from "./accumulate.js";
export { upgradeMessageContent } from "./compat.js";
export { type SegmentOptions, SegmentPipeline } from "./segment.js";
export { jsonSize, type ShapeBounds } from "./shape.js";
export {
  type AgUiEvent,
  type AgUiMessage,
  type EndResult,
  type EventRecord,
  type FaultRule,
  PipelineFault,
  type PipelineLogger,
  type PushResult,
  type TerminalInfo,
} from "./types.js";
export type { AguiValidation, ValidateFunction } from "./validate.js";
export { AGUI_PROTOCOL_VERSION, compareDeclaredProtocol } from "./version.js";
