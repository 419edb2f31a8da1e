import type { ServerResponse } from "node:http";

/**
 * The one disconnect rule: a client is gone when its response closes before the response
 * finished. The response's `close` also fires after a normal answer (keep-alive sockets stay
 * open, so the socket's own close is no signal); `writableFinished` tells the two apart.
 */
export function clientGone(response: ServerResponse): boolean {
  return !response.writableFinished;
}

/** Aborts when the client goes away before the response finished (a wait, a stream). */
export function disconnectSignal(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  response.once("close", () => {
    if (clientGone(response)) controller.abort(new Error("client disconnected"));
  });
  return controller.signal;
}
