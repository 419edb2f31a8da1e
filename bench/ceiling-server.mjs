// The baselines ("ceilings") the benchmark compares against, in a process of their own:
// bare Fastify 5 with no validation, storage or run engine.
//
//   POST /echo          Ceiling A: returns the JSON body it was sent.
//   GET|POST /sse?n=N   Ceiling B: an SSE stream of N small events framed like ours
//                       (`id`, `event: agent_event`, one-line JSON `data`), one write per event,
//                       waiting for `drain` when the socket is full, then a final frame; closes.
//   GET /sse-idle       An SSE stream that sends nothing (keep-alive comments every 15 s) until
//                       the client leaves: the baseline for memory per idle stream.
//   GET /healthz        200 once listening.
//
// Usage: node bench/ceiling-server.mjs --port N
import { parseArgs } from "node:util";
import Fastify from "fastify";

const { values } = parseArgs({ options: { port: { type: "string" } } });
const port = Number(values.port ?? 0);

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });

app.get("/healthz", async () => "ok");

app.post("/echo", async (request) => request.body);

const RUN_ID = "2f0bd1b2-6f7c-4a53-9a1e-0d3f9b3c8a11";
const MSG_ID = "5c1a7f0e-2b8d-4a45-9e07-3f6d2c1b0a99";

function openSse(reply) {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
  });
  raw.flushHeaders();
  return raw;
}

async function stream(request, reply) {
  const n = Math.max(0, Math.min(1_000_000, Number(request.query.n ?? 10)));
  const raw = openSse(reply);
  let closed = false;
  raw.on("close", () => {
    closed = true;
  });
  for (let i = 1; i <= n && !closed; i++) {
    const data = JSON.stringify({
      type: "custom",
      run_id: RUN_ID,
      status: "pending",
      update: { type: "TEXT_MESSAGE_CONTENT", messageId: MSG_ID, delta: `tok${i % 100} ` },
    });
    if (!raw.write(`id: ${i}\nevent: agent_event\ndata: ${data}\n\n`)) {
      await new Promise((resolve) => {
        raw.once("drain", resolve);
        raw.once("close", resolve);
      });
    }
  }
  if (!closed) {
    const final = JSON.stringify({
      type: "values",
      run_id: RUN_ID,
      status: "success",
      values: {},
      messages: [],
    });
    raw.end(`id: ${n + 1}\nevent: agent_event\ndata: ${final}\n\n`);
  }
}

app.get("/sse", stream);
app.post("/sse", stream);

app.get("/sse-idle", async (_request, reply) => {
  const raw = openSse(reply);
  const timer = setInterval(() => raw.write(": keep-alive\n\n"), 15_000);
  timer.unref();
  raw.on("close", () => clearInterval(timer));
});

await app.listen({ port, host: "127.0.0.1" });
const stop = () => app.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
