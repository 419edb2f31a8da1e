import {
  HttpAgent,
  type RunAgentInput,
  runHttpRequest,
  transformHttpEventStream,
} from "@ag-ui/client";

/**
 * @ag-ui/client's HttpAgent made able to reconnect, as an AG-UI app would: `connect()` posts the
 * RunAgentInput to the agent's `/connect` route and reads the answer with the client's own
 * stream decoding (SSE or protobuf, by content type).
 */
export class ReconnectingAgent extends HttpAgent {
  constructor(
    private readonly agentUrl: string,
    threadId: string,
    private readonly accept = "text/event-stream",
    /** Appended to the run URL (e.g. `?on_disconnect=continue`). */
    query = "",
  ) {
    super({ url: `${agentUrl}${query}`, threadId });
  }

  protected override requestInit(input: RunAgentInput): RequestInit {
    const init = super.requestInit(input);
    return { ...init, headers: { ...(init.headers as object), accept: this.accept } };
  }

  protected override connect(input: RunAgentInput) {
    return transformHttpEventStream(
      runHttpRequest(() => fetch(`${this.agentUrl}/connect`, this.requestInit(input))),
    );
  }
}
