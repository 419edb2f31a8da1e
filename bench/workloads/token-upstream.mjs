// A remote AG-UI agent as cheap as it can be: `POST /` (any path) answers a RunAgentInput with
// an SSE stream of RUN_STARTED, TEXT_MESSAGE_START, `tokens` TEXT_MESSAGE_CONTENT events
// `delay` ms apart, TEXT_MESSAGE_END and RUN_FINISHED, the way a model behind an AG-UI
// framework streams an answer. The `conversations` workload puts it behind `agui-http` (ours)
// and behind the bare relay (the ceiling), so both read the very same upstream.
//
// Token i is due at `start + (i + 1) × delay` (an absolute schedule, not a chain of timers),
// so a late timer does not push every later token back: gaps measured at the client are the
// upstream's lateness plus what the path in between adds. Plain node:http, no framework: its
// cost is the load generator's core's, not the server's.
//
// Query (of the URL in the agent's config): tokens (100), delay (ms, 20).
// Usage: node bench/workloads/token-upstream.mjs --port N
import http from "node:http";
import { parseArgs } from "node:util";
import { tokenText } from "./token-agent.mjs";

const { values } = parseArgs({ options: { port: { type: "string" } } });

function frame(event) {
  return `data: ${JSON.stringify(event)}\n\n`;
}

const server = http.createServer((req, res) => {
  if (req.method === "GET") {
    res.end("ok");
    return;
  }
  const url = new URL(req.url ?? "/", "http://upstream");
  const tokens = Math.max(0, Math.min(100_000, Number(url.searchParams.get("tokens") ?? 100)));
  const delay = Math.max(0, Number(url.searchParams.get("delay") ?? 20));
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    let input;
    try {
      input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      res.writeHead(400, { "content-type": "text/plain" }).end("body is not JSON");
      return;
    }
    const threadId = String(input.threadId ?? "thread");
    const runId = String(input.runId ?? "run");
    const messageId = `msg-${runId}`;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(
      frame({ type: "RUN_STARTED", threadId, runId }) +
        frame({ type: "TEXT_MESSAGE_START", messageId, role: "assistant" }),
    );
    const start = performance.now();
    let i = 0;
    let timer;
    const next = () => {
      if (res.destroyed) return;
      const due = start + (i + 1) * delay;
      timer = setTimeout(tick, Math.max(0, due - performance.now()));
    };
    const tick = () => {
      res.write(frame({ type: "TEXT_MESSAGE_CONTENT", messageId, delta: tokenText(i) }));
      i += 1;
      if (i < tokens) return next();
      res.end(
        frame({ type: "TEXT_MESSAGE_END", messageId }) +
          frame({ type: "RUN_FINISHED", threadId, runId }),
      );
    };
    res.on("close", () => clearTimeout(timer));
    if (tokens === 0) {
      res.end(
        frame({ type: "TEXT_MESSAGE_END", messageId }) +
          frame({ type: "RUN_FINISHED", threadId, runId }),
      );
    } else next();
  });
});

// A generous backlog: a level's conversations arrive within a second.
server.listen({ port: Number(values.port ?? 0), host: "127.0.0.1", backlog: 8192 }, () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
