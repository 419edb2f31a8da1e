/**
 * An AG-UI HTTP endpoint for a LangGraph deployment, as a user would write one in Node with the
 * AG-UI packages alone (the pattern of the AG-UI server quickstart, and what Python's
 * `ag-ui-langgraph` endpoint does): `POST /agent` takes a RunAgentInput, runs `@ag-ui/langgraph`'s
 * LangGraphAgent against the LangGraph API server named by the first argument, and streams its
 * events with `@ag-ui/encoder` (SSE, or protobuf when `Accept` asks for it). A client that goes
 * away stops the run: `abortRun()` cancels the LangGraph run.
 *
 * Prints `{"listening": "<endpoint url>"}` once it serves.
 */
import { createServer } from "node:http";
import { RunAgentInputSchema } from "@ag-ui/core/schemas";
import { EventEncoder } from "@ag-ui/encoder";
import { LangGraphAgent } from "@ag-ui/langgraph";

const deploymentUrl = process.argv[2];
if (!deploymentUrl) throw new Error("usage: langgraph-agui-endpoint.mjs <LangGraph API url>");

const template = new LangGraphAgent({
  deploymentUrl,
  graphId: "assistant",
  emitInterruptOutcome: true,
});

/** @param {import("node:http").IncomingMessage} req @param {import("node:http").ServerResponse} res */
async function serve(req, res) {
  if (req.method !== "POST" || req.url !== "/agent") {
    res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
    return;
  }
  let body = "";
  for await (const chunk of req) body += chunk;
  const parsed = (() => {
    try {
      return RunAgentInputSchema.safeParse(JSON.parse(body));
    } catch (err) {
      return { success: false, error: err };
    }
  })();
  if (!parsed.success) {
    res.writeHead(422, { "content-type": "application/json" });
    res.end(
      JSON.stringify({ error: `not a RunAgentInput: ${parsed.error?.message ?? parsed.error}` }),
    );
    return;
  }
  const encoder = new EventEncoder({ accept: req.headers.accept });
  res.writeHead(200, { "content-type": encoder.getContentType(), "cache-control": "no-cache" });
  const agent = template.clone();
  let ended = false;
  const subscription = agent.run(parsed.data).subscribe({
    next: (event) => res.write(encoder.encodeBinary(event)),
    error: (err) => {
      ended = true;
      res.end(encoder.encodeBinary({ type: "RUN_ERROR", message: String(err?.message ?? err) }));
    },
    complete: () => {
      ended = true;
      res.end();
    },
  });
  res.on("close", () => {
    if (ended) return;
    agent.abortRun();
    subscription.unsubscribe();
  });
}

const server = createServer((req, res) => {
  serve(req, res).catch((err) => {
    if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: String(err?.message ?? err) }));
  });
});
server.listen(0, "127.0.0.1", () => {
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  process.stdout.write(`${JSON.stringify({ listening: `http://127.0.0.1:${port}/agent` })}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
