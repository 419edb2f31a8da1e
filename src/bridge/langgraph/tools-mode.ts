/**
 * LangGraph's `tools` stream mode (what `useStream`'s `toolProgress` reads) from AG-UI tool
 * calls: a call whose arguments are complete (TOOL_CALL_END) is a tool starting with that
 * input, `on_tool_start`; its result (TOOL_CALL_RESULT) is the tool ending with that output,
 * `on_tool_end` (`on_tool_error` when the result says it failed).
 */
import { parseArgs } from "./messages.js";

type Rec = Record<string, unknown>;

export class ToolsMode {
  /** Tool call id → its name and its arguments so far. */
  private readonly calls = new Map<string, { name: string; args: string }>();

  map(type: string, event: Rec): Array<{ event: "tools"; data: Rec }> {
    const toolCallId = String(event.toolCallId ?? "");
    switch (type) {
      case "TOOL_CALL_START":
      case "TOOL_CALL_CHUNK":
      case "TOOL_CALL_ARGS": {
        const call = this.calls.get(toolCallId) ?? { name: "", args: "" };
        if (typeof event.toolCallName === "string") call.name = event.toolCallName;
        if (typeof event.delta === "string") call.args += event.delta;
        this.calls.set(toolCallId, call);
        return [];
      }
      case "TOOL_CALL_END": {
        const call = this.calls.get(toolCallId);
        if (!call) return [];
        const input = parseArgs(call.args);
        return [
          { event: "tools", data: { event: "on_tool_start", toolCallId, name: call.name, input } },
        ];
      }
      case "TOOL_CALL_RESULT": {
        const name = this.calls.get(toolCallId)?.name ?? "";
        this.calls.delete(toolCallId);
        const data =
          event.error !== undefined && event.error !== null
            ? { event: "on_tool_error", toolCallId, name, error: event.error }
            : { event: "on_tool_end", toolCallId, name, output: event.content ?? "" };
        return [{ event: "tools", data }];
      }
      default:
        return [];
    }
  }
}
