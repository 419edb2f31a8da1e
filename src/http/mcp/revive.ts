import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { webTransportOf } from "./sdk-internals.js";

/** What an initialize request asked for: recorded so that another replica can serve the session. */
export interface InitializeParams {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  clientInfo: Record<string, unknown>;
}

/**
 * Brings a new transport and its server to where a recorded session's initialize left them: the
 * same initialize request is handed to them again, so that the SDK negotiates the same version,
 * keeps the client's capabilities (elicitation) and takes the session's id (the transport's
 * `sessionIdGenerator` gives it). Nothing reaches the client: the answer is read and dropped.
 *
 * The Node transport wraps the Web-standard one and takes Node requests only; the request is
 * made here, so it goes to the one inside (sdk-internals.ts).
 */
export async function reviveTransport(
  transport: StreamableHTTPServerTransport,
  asked: InitializeParams,
): Promise<void> {
  const inner = webTransportOf(transport);
  const response = await inner.handleRequest(
    new Request("http://localhost/mcp", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: asked }),
    }),
  );
  const answer = await response.text();
  if (!response.ok || !answer.includes('"result"')) {
    throw new Error(`the recorded session could not be revived: ${answer.slice(0, 200)}`);
  }
  await inner.handleRequest(
    new Request("http://localhost/mcp", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": transport.sessionId ?? "",
        "mcp-protocol-version": asked.protocolVersion,
      },
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    }),
  );
}
