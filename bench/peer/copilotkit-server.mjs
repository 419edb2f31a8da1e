// The CopilotKit runtime as its users run it (`@copilotkit/runtime`'s v2 `CopilotRuntime` with
// its default in-memory runner, `InMemoryAgentRunner`, behind its Node listener in REST mode),
// serving one agent, `remote`: an `HttpAgent` of `@ag-ui/client` on the URL given, the same
// token upstream our `agui-http` agent reads in the `conversations` row. `POST
// {base}/agent/remote/run` with a RunAgentInput answers the run as AG-UI SSE, as our
// `/copilotkit/agent/remote/run` does.
//
// Usage: node bench/peer/copilotkit-server.mjs --port N --upstream URL
import http from "node:http";
import { parseArgs } from "node:util";
import { HttpAgent } from "@ag-ui/client";
import { CopilotRuntime, InMemoryAgentRunner } from "@copilotkit/runtime/v2";
import { createCopilotNodeListener } from "@copilotkit/runtime/v2/node";

const { values } = parseArgs({
  options: { port: { type: "string" }, upstream: { type: "string" } },
});

const runtime = new CopilotRuntime({
  agents: { remote: new HttpAgent({ url: values.upstream }) },
  runner: new InMemoryAgentRunner(),
});
const listener = createCopilotNodeListener({ runtime, basePath: "/copilotkit" });

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/healthz") {
    res.end("ok");
    return;
  }
  listener(req, res);
});
server.listen({ port: Number(values.port ?? 0), host: "127.0.0.1", backlog: 8192 }, () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => process.exit(0));
