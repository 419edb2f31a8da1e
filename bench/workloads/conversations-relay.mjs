// The ceiling of the `conversations` workload: bare Fastify 5 relaying a remote AG-UI agent's
// SSE stream to the client, framed like our ACP custom stream, with nothing stored.
//
//   POST /relay   a JSON body (the same ACP run body ours gets, parsed and its messages kept);
//                 POSTs a RunAgentInput to the upstream (undici, as agui-http does), splits
//                 its SSE into events, parses each and writes it as
//                 `id: n\nevent: agent_event\ndata: {"type":"custom",…,"update":<event>}`,
//                 one write per event, then a final frame; aborts the upstream if the client
//                 leaves.
//   GET /healthz  200 once listening.
//
// Usage: node bench/workloads/conversations-relay.mjs --port N --upstream URL
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import Fastify from "fastify";
import { Agent, request } from "undici";

const { values } = parseArgs({
  options: { port: { type: "string" }, upstream: { type: "string" } },
});
const upstream = values.upstream;
if (!upstream) throw new Error("--upstream URL is required");

const dispatcher = new Agent({ headersTimeout: 0, bodyTimeout: 0 });
const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });

app.get("/healthz", async () => "ok");

app.post("/relay", async (req, reply) => {
  const runId = randomUUID();
  const input = {
    threadId: randomUUID(),
    runId,
    messages: req.body?.input?.messages ?? [],
    state: {},
    tools: [],
    context: [],
    forwardedProps: {},
  };
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
  });
  raw.flushHeaders();
  const controller = new AbortController();
  raw.on("close", () => controller.abort());
  let seq = 0;
  try {
    const res = await request(upstream, {
      method: "POST",
      dispatcher,
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(input),
      signal: controller.signal,
    });
    let buffer = "";
    res.body.setEncoding("utf8");
    for await (const chunk of res.body) {
      buffer += chunk;
      let end = buffer.indexOf("\n\n");
      while (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf("\n\n");
        const data = block
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trimStart())
          .join("\n");
        if (data === "") continue;
        const update = JSON.parse(data);
        seq += 1;
        const frame = JSON.stringify({ type: "custom", run_id: runId, status: "pending", update });
        if (!raw.write(`id: ${seq}\nevent: agent_event\ndata: ${frame}\n\n`)) {
          await new Promise((resolve) => {
            raw.once("drain", resolve);
            raw.once("close", resolve);
          });
        }
      }
    }
    const final = JSON.stringify({ type: "values", run_id: runId, status: "success", values: {} });
    raw.end(`id: ${seq + 1}\nevent: agent_event\ndata: ${final}\n\n`);
  } catch (err) {
    if (!controller.signal.aborted) {
      raw.end(`event: error\ndata: ${JSON.stringify(String(err?.message ?? err))}\n\n`);
    }
  }
});

// The listen backlog the server under test has (src/server.ts).
await app.listen({ port: Number(values.port ?? 0), host: "127.0.0.1", backlog: 4096 });
const stop = () => app.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
