/**
 * LangGraph's `messages` stream mode (the one before `messages-tuple`): each message as it grows.
 * The first chunk of a message sends `messages/metadata` (`{<id>: {metadata}}`), each chunk
 * `messages/partial` with the whole message so far, its end `messages/complete` with the whole
 * message; a tool result, which comes whole, sends `messages/complete` alone.
 */
import { parseArgs, toolResultMessage } from "./messages.js";

type Rec = Record<string, unknown>;

export interface ModeEvent {
  event: string;
  data: unknown;
}

interface Growing {
  id: string;
  text: string;
  calls: Array<{ id: string; name: string; args: string }>;
  announced: boolean;
}

export class MessagesMode {
  private readonly messages = new Map<string, Growing>();
  /** Tool call id → the id of the message it belongs to. */
  private readonly callOwners = new Map<string, string>();

  constructor(private readonly metadata: Rec) {}

  map(type: string, event: Rec): ModeEvent[] {
    switch (type) {
      case "TEXT_MESSAGE_CONTENT":
      case "TEXT_MESSAGE_CHUNK": {
        if (typeof event.delta !== "string" || event.delta === "") return [];
        const message = this.growing(String(event.messageId ?? ""));
        message.text += event.delta;
        return this.partial(message);
      }
      case "TEXT_MESSAGE_END":
        return this.complete(String(event.messageId ?? ""));
      case "TOOL_CALL_START":
      case "TOOL_CALL_CHUNK":
      case "TOOL_CALL_ARGS": {
        const callId = String(event.toolCallId ?? "");
        let owner = this.callOwners.get(callId);
        if (owner === undefined) {
          const parent = event.parentMessageId;
          owner = typeof parent === "string" && parent !== "" ? parent : callId;
          this.callOwners.set(callId, owner);
        }
        const message = this.growing(owner);
        let call = message.calls.find((known) => known.id === callId);
        if (!call) {
          call = { id: callId, name: String(event.toolCallName ?? ""), args: "" };
          message.calls.push(call);
        }
        if (typeof event.delta === "string") call.args += event.delta;
        return this.partial(message);
      }
      case "TOOL_CALL_END": {
        const owner = this.callOwners.get(String(event.toolCallId ?? ""));
        return owner === undefined ? [] : this.complete(owner);
      }
      case "TOOL_CALL_RESULT":
        return [{ event: "messages/complete", data: [toolResultMessage(event)] }];
      default:
        return [];
    }
  }

  private growing(id: string): Growing {
    let message = this.messages.get(id);
    if (!message) {
      message = { id, text: "", calls: [], announced: false };
      this.messages.set(id, message);
    }
    return message;
  }

  private partial(message: Growing): ModeEvent[] {
    const out: ModeEvent[] = [];
    if (!message.announced) {
      message.announced = true;
      out.push({ event: "messages/metadata", data: { [message.id]: { metadata: this.metadata } } });
    }
    out.push({ event: "messages/partial", data: [dictOf(message)] });
    return out;
  }

  private complete(id: string): ModeEvent[] {
    const message = this.messages.get(id);
    return message ? [{ event: "messages/complete", data: [dictOf(message)] }] : [];
  }
}

function dictOf(message: Growing): Rec {
  return {
    type: "ai",
    id: message.id,
    content: message.text,
    additional_kwargs: {},
    response_metadata: {},
    name: null,
    tool_calls: message.calls.map((call) => ({
      id: call.id,
      name: call.name,
      args: parseArgs(call.args),
      type: "tool_call",
    })),
    invalid_tool_calls: [],
  };
}
