/**
 * A run's AG-UI events as MCP progress (2025-11-25, Progress): a count that only grows, and a
 * message saying what the agent is doing — the step it started, or the reply as it is written.
 */

/** The longest progress message: the end of the reply so far, when it is longer. */
const MAX_MESSAGE = 200;

export class ProgressOfEvents {
  private count = 0;
  private text = "";
  private message: string | undefined;

  /** Takes one event; true when it says something a progress notification should carry. */
  push(event: Record<string, unknown>): boolean {
    this.count += 1;
    switch (event.type) {
      case "STEP_STARTED":
        this.message = `step: ${String(event.stepName ?? "")}`;
        return true;
      case "TEXT_MESSAGE_START":
        this.text = "";
        return false;
      case "TEXT_MESSAGE_CONTENT":
        if (typeof event.delta === "string") this.text += event.delta;
        this.message =
          this.text.length > MAX_MESSAGE ? `…${this.text.slice(-MAX_MESSAGE)}` : this.text;
        return true;
      case "TOOL_CALL_START":
        this.message = `tool: ${String(event.toolCallName ?? "")}`;
        return true;
      default:
        return false;
    }
  }

  /** The notification's params (without the token). */
  get params(): { progress: number; message?: string } {
    return this.message === undefined
      ? { progress: this.count }
      : { progress: this.count, message: this.message };
  }
}
