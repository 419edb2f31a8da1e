import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";

/**
 * The parts of the SDK's Streamable HTTP transport this server needs and the SDK keeps private
 * (SDK 1.32.2, pinned): the Web-standard transport inside the Node one (a revived session is
 * handed its initialize there: revive.ts) and which SSE stream answers a request (a call's
 * event ids name its stream: call-hooks.ts). test/mcp/resume.test.ts and
 * test/scale/mcp-resume-replicas.test.ts fail when an SDK update moves them.
 */
interface Internals {
  _webStandardTransport: WebStandardStreamableHTTPServerTransport;
}

export function webTransportOf(
  transport: StreamableHTTPServerTransport,
): WebStandardStreamableHTTPServerTransport {
  return (transport as unknown as Internals)._webStandardTransport;
}

/** The SSE stream (the SDK's id) that answers the request; undefined when none does. */
export function streamOfRequest(
  transport: StreamableHTTPServerTransport,
  requestId: string | number,
): string | undefined {
  const inner = webTransportOf(transport) as unknown as {
    _requestToStreamMapping?: Map<string | number, string>;
  };
  return inner._requestToStreamMapping?.get(requestId);
}
