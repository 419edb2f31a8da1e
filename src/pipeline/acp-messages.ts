/**
 * Moved to src/bridge/messages.ts. Kept only for src/http/copilotkit/inspect.ts, which another
 * change set is editing at the same time; delete this file once that import points at the
 * bridge.
 */
export { acpToAguiMessage } from "../bridge/messages.js";
