import type {
  EventId,
  EventStore,
  StreamId,
} from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { type CallStream, eventIdOf, newCallStream } from "./call-streams.js";

/** Each session's log, by its transport (the tools/call hooks find their stream there). */
export const eventLogOf = new WeakMap<object, SessionEventLog>();

/** Events one session keeps for resuming its streams; the oldest go first beyond it. */
const MAX_EVENTS = 500;

interface StreamState {
  position: CallStream;
  /** Events of the stream sent so far, and of them still kept. */
  sent: number;
  kept: number;
  /** Its JSON-RPC response was stored: the stream has ended. */
  answered: boolean;
}

/**
 * What a session's SSE streams sent (progress, elicitation requests, results), each with an
 * event id, so that a client whose stream dropped reconnects with `Last-Event-ID` and gets
 * the rest of that stream, missing nothing (Streamable HTTP, "Resumability and Redelivery").
 * The SDK's transport stores and replays through this, on the replica that holds the session
 * (which still waits for the answers to the questions it asked on the stream). An event id also
 * names its stream's position in the call's run (call-streams.ts), so that any replica can
 * resume a tools/call's stream from the run's stored frames instead (resume.ts).
 */
export class SessionEventLog implements EventStore {
  private readonly events: Array<{ id: EventId; streamId: StreamId; message: JSONRPCMessage }> = [];
  private readonly streams = new Map<StreamId, StreamState>();

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const stream = this.stateOf(streamId);
    const id = eventIdOf(stream.position, ++stream.sent);
    stream.kept += 1;
    if ("result" in message || "error" in message) stream.answered = true;
    this.events.push({ id, streamId, message });
    if (this.events.length > MAX_EVENTS) this.forget(this.events.shift()!.streamId);
    return id;
  }

  /** Whether the event is kept here and its stream still open (the SDK can resume it). */
  resumable(eventId: EventId): boolean {
    const event = this.events.find((e) => e.id === eventId);
    return event !== undefined && this.streams.get(event.streamId)?.answered === false;
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

  /** Where the SDK's stream stands in its call's run (a tools/call's hooks move it on). */
  positionOf(streamId: StreamId): CallStream {
    return this.stateOf(streamId).position;
  }

  private stateOf(streamId: StreamId): StreamState {
    let stream = this.streams.get(streamId);
    if (!stream) {
      stream = { position: newCallStream(), sent: 0, kept: 0, answered: false };
      this.streams.set(streamId, stream);
    }
    return stream;
  }

  private forget(streamId: StreamId): void {
    const stream = this.streams.get(streamId);
    if (stream && --stream.kept === 0) this.streams.delete(streamId);
  }
}
