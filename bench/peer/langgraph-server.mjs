/**
 * The LangGraph JS API server (`@langchain/langgraph-api`, what `langgraphjs dev` runs), started
 * in-process as integration/servers/langgraph-server.mjs does, serving the graphs of
 * echo-graphs.mjs as `echo` and `stream`. Its storage is the package's own: in memory, flushed
 * to files under the directory given.
 *
 * Usage: node bench/peer/langgraph-server.mjs --port N --storage DIR [--workers N]
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { startServer } from "@langchain/langgraph-api/server";

const { values } = parseArgs({
  options: {
    port: { type: "string" },
    storage: { type: "string" },
    workers: { type: "string", default: "10" },
  },
});
if (!values.port || !values.storage) {
  throw new Error("usage: langgraph-server.mjs --port N --storage DIR [--workers N]");
}
const graphs = resolve(import.meta.dirname, "echo-graphs.mjs");
const { host, cleanup } = await startServer({
  port: Number(values.port),
  host: "127.0.0.1",
  // Runs executed at once by this process (the queue's workers).
  nWorkers: Number(values.workers),
  cwd: values.storage,
  graphs: { echo: `${graphs}:echo`, stream: `${graphs}:stream` },
});
process.stdout.write(`${JSON.stringify({ listening: `http://${host}` })}\n`);

const stop = () => cleanup().finally(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
