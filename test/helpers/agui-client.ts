/** AG-UI clients as tests use them: `@ag-ui/client`'s HttpAgent asking for protobuf, and a copy of what a client received. */
import { HttpAgent } from "@ag-ui/client";

/** An HttpAgent that asks for protobuf, as a binary-capable AG-UI client does. */
export class ProtoAgent extends HttpAgent {
  protected override requestInit(input: Parameters<HttpAgent["run"]>[0]): RequestInit {
    const init = super.requestInit(input);
    return {
      ...init,
      headers: {
        ...(init.headers as Record<string, string>),
        Accept: "application/vnd.ag-ui.event+proto",
      },
    };
  }
}

/**
 * The response as the client gets it, and a copy of every byte of its body, complete once the
 * body ended (the client reads its own branch meanwhile).
 */
export function teeBody(response: Response): { response: Response; bytes: Promise<Buffer> } {
  if (!response.body) return { response, bytes: Promise.resolve(Buffer.alloc(0)) };
  const [forClient, forCopy] = response.body.tee();
  const bytes = (async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of forCopy) chunks.push(Buffer.from(chunk));
    return Buffer.concat(chunks);
  })();
  const copy = new Response(forClient, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  return { response: copy, bytes };
}
