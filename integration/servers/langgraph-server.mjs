/**
 * The LangGraph API server (`@langchain/langgraph-api`, what `langgraphjs dev` runs) serving
 * `agents/langgraph-graph.ts` as graph `assistant`, with its in-memory storage under the
 * directory given as the first argument. Prints `{"listening": "<url>"}` once it serves.
 */
import { resolve } from "node:path";
import { startServer } from "@langchain/langgraph-api/server";

const cwd = process.argv[2];
if (!cwd) throw new Error("usage: langgraph-server.mjs <storage directory>");

const { host, cleanup } = await startServer({
  port: 0,
  host: "127.0.0.1",
  nWorkers: 4,
  cwd,
  graphs: { assistant: `${resolve(import.meta.dirname, "../agents/langgraph-graph.ts")}:graph` },
});
process.stdout.write(`${JSON.stringify({ listening: `http://${host}` })}\n`);

const stop = () => cleanup().finally(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
