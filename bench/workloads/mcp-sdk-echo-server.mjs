// The MCP SDK's own server with an echo tool, the `mcp-call` workload's baseline: the SDK's
// low-level Server (as our face uses it) on its Streamable HTTP transport (sessions, SSE answers, as our face runs it), on
// node:http. The tool answers its `message` back as text, as our echo agent does.
// Usage: node mcp-sdk-echo-server.mjs --port N   (GET /healthz answers 200 once listening)
import { randomUUID } from "node:crypto";
import http from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const port = Number(process.argv[process.argv.indexOf("--port") + 1]);
const sessions = new Map();

function echoServer() {
  const server = new Server(
    { name: "sdk-echo", version: "1.0.0" },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: "echo",
        description: "Streams back the message.",
        inputSchema: { type: "object", properties: { message: { type: "string" } } },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => ({
    content: [{ type: "text", text: String(request.params.arguments?.message ?? "") }],
  }));
  return server;
}

const readJson = (req) =>
  new Promise((resolve, reject) => {
    let text = "";
    req.on("data", (chunk) => (text += chunk));
    req.on("end", () => {
      try {
        resolve(text === "" ? undefined : JSON.parse(text));
      } catch (err) {
        reject(err);
      }
    });
  });

http
  .createServer(async (req, res) => {
    if (req.url === "/healthz") {
      res.writeHead(200).end("ok");
      return;
    }
    const body = req.method === "POST" ? await readJson(req) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (!transport && isInitializeRequest(body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      await echoServer().connect(transport);
    }
    if (!transport) {
      res.writeHead(400).end();
      return;
    }
    await transport.handleRequest(req, res, body);
  })
  .listen(port, "127.0.0.1");
