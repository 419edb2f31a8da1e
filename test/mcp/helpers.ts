import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";

/** The official SDK's client, connected over Streamable HTTP to `url` (initialize done). */
export async function mcpClient(
  url: string,
  options: { headers?: Record<string, string>; capabilities?: ClientCapabilities } = {},
): Promise<Client> {
  const client = new Client(
    { name: "acp-agui-tests", version: "1.0.0" },
    { capabilities: options.capabilities ?? {} },
  );
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: options.headers ?? {} },
  });
  await client.connect(transport);
  return client;
}

/** The text of a tool result's content. */
export function textOf(result: object): string {
  const content = ((result as { content?: unknown }).content ?? []) as Array<{
    type: string;
    text?: string;
  }>;
  return content.map((part) => (part.type === "text" ? (part.text ?? "") : "")).join("");
}

/** The run behind a tool result (its `_meta`), which ACP, AG-UI and A2A read back too. */
export function runIdOf(result: object): string {
  const meta = (result as { _meta?: Record<string, unknown> })._meta;
  const run = meta?.["io.github.acp-agui/run"] as { runId?: string } | undefined;
  if (!run?.runId) throw new Error("the result names no run");
  return run.runId;
}
