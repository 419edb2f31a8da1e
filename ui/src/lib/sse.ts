import { createParser } from "eventsource-parser";
import { type ApiRequest, send } from "./api";

/** One SSE frame as the ACP stream sends it: `id: <seq>`, `event: agent_event`, JSON data. */
export interface SseFrame {
  id: number;
  event: string;
  data: string;
}

export interface StreamHandlers {
  /** The response arrived (headers known), before any frame. */
  onOpen?(response: Response): void;
  onFrame(frame: SseFrame): void;
}

/**
 * Opens an ACP stream with fetch (so the API key header can be sent, which EventSource cannot)
 * and hands each frame over as it arrives. Resolves when the server closes the stream; rejects
 * on a refused request or a broken connection, unless aborted.
 */
export async function readStream(
  path: string,
  request: ApiRequest,
  handlers: StreamHandlers,
): Promise<void> {
  const response = await send(path, {
    ...request,
    headers: { accept: "text/event-stream", ...request.headers },
  });
  handlers.onOpen?.(response);
  if (!response.body) return;
  const parser = createParser({
    onEvent(message) {
      handlers.onFrame({
        id: Number(message.id ?? 0),
        event: message.event ?? "message",
        data: message.data,
      });
    },
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      parser.feed(value);
    }
  } catch (error) {
    if (request.signal?.aborted) return;
    throw error;
  } finally {
    reader.releaseLock();
  }
}
