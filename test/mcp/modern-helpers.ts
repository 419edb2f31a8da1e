/** The 2026-07-28 side of the MCP tests: the official 2026 client, and raw requests. */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

export const MODERN = "2026-07-28";
const V = MODERN;

/** The official 2026 client, pinned to 2026-07-28 (connect probes with server/discover). */
export async function modernClient(
  url: string,
  options: { capabilities?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<Client> {
  const client = new Client(
    { name: "acp-agui-tests", version: "1.0.0" },
    { capabilities: options.capabilities ?? {}, versionNegotiation: { mode: { pin: V } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: options.headers ?? {} },
    }),
  );
  return client;
}

/** A raw 2026 request: the body with its `_meta` envelope and the headers that mirror it. */
export function modernPost(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  options: { headers?: Record<string, string>; capabilities?: Record<string, unknown> } = {},
) {
  const body = {
    jsonrpc: "2.0",
    id: 1,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? {},
        "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
      },
    },
  };
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": V,
      "mcp-method": method,
      ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
      ...options.headers,
    },
    body: JSON.stringify(body),
  });
}

/**
 * The host's raw request path ext-tasks asks for on 2026-07-28 (its `rawDispatch`): the
 * framed request POSTed as one JSON-RPC message with the headers that mirror it.
 */
export function rawDispatchTo(url: string, headers: Record<string, string> = {}) {
  let next = 0;
  return async (request: unknown) => {
    const message = request as { method: string; params?: { name?: unknown } };
    next += 1;
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": V,
        "mcp-method": message.method,
        ...(typeof message.params?.name === "string" ? { "mcp-name": message.params.name } : {}),
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: `raw-${next}`, ...message }),
    });
    const body = (await response.json()) as {
      result?: never;
      error?: { code: number; message: string };
    };
    return body.error
      ? { kind: "error" as const, error: body.error }
      : { kind: "result" as const, result: body.result as never };
  };
}
