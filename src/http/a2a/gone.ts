import type { ServerResponse } from "node:http";
import { LazyAbortController } from "../../engine/run-engine/lazy-abort.js";
import { clientGone } from "../streaming/client-gone.js";

/**
 * The client of a unary call leaving, watched without an AbortSignal of its own unless the
 * call needs one (see LazyAbortController): a blocking SendMessage waits for its task's end
 * through `onAbort`, and the other calls never look.
 */
export function disconnectWatch(response: ServerResponse): LazyAbortController {
  const gone = new LazyAbortController();
  response.once("close", () => {
    if (clientGone(response)) gone.abort(new Error("client disconnected"));
  });
  return gone;
}

/** What a unary call is given to tell that its client left. */
export type ClientGone = AbortSignal | LazyAbortController;
