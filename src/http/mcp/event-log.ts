import type {
  EventId,
  EventStore,
  StreamId,
} from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** Events one session keeps for resuming its streams; the oldest go first beyond it. */
const MAX_EVENTS = 500;

/**
 * What a session's SSE streams sent (progress, elicitation requests, results), each with an
 * event id, so that a client whose stream dropped reconnects with `Last-Event-ID` and gets
 * the rest of that stream, missing nothing (Streamable HTTP, "Resumability and Redelivery").
 * The SDK's transport stores and replays through this; it lives with the session, on the
 * replica that holds it.
 */
export class SessionEventLog implements EventStore {
  private readonly events: Array<{ id: EventId; streamId: StreamId; message: JSONRPCMessage }> = [];
  private seq = 0;

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const id = String(++this.seq);
    this.events.push({ id, streamId, message });
    if (this.events.length > MAX_EVENTS) this.events.shift();
    return id;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return this.events.find((event) => event.id === eventId)?.streamId;
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const at = this.events.findIndex((event) => event.id === lastEventId);
    if (at === -1) throw new Error(`event ${lastEventId} is not kept (any more)`);
    const { streamId } = this.events[at]!;
    for (const event of this.events.slice(at + 1)) {
      // The priming event carries no message: nothing to send again.
      if (event.streamId === streamId && Object.keys(event.message).length > 0) {
        await send(event.id, event.message);
      }
    }
    return streamId;
  }
}
