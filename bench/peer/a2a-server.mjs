#!/usr/bin/env node
// The A2A peer of `npm run bench:peer`: the official `@a2a-js/sdk` server (Express, its
// DefaultRequestHandler, the JSON-RPC and HTTP+JSON handlers) with an echo executor that
// answers as our echo agent does with no delay: the task, a working status, the user's text as
// a streamed artifact (a chunk per word, then an empty last chunk), a `state` artifact, and the
// completed status carrying the text as the agent's message.
//
//   node bench/peer/a2a-server.mjs --port 8123 [--store memory|sqlite] [--db file.db]
//
// `--store memory` is the SDK's InMemoryTaskStore; `--store sqlite` its DatabaseTaskStore on
// SQLite through Kysely and better-sqlite3 (the durable peer), the table created by the SDK's
// own `a2a-db upgrade` before the server starts, the file in WAL mode with synchronous=NORMAL
// as ours runs it (src/storage/sqlite/open-database.ts).
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { Role, TaskState } from "@a2a-js/sdk";
import { DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { jsonRpcHandler, restHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import express from "express";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "0" },
    store: { type: "string", default: "memory" },
    db: { type: "string" },
  },
});

const part = (value) => ({
  content: { $case: "text", value },
  metadata: undefined,
  filename: "",
  mediaType: "",
});

async function taskStore() {
  if (values.store === "memory") return new InMemoryTaskStore();
  if (values.store !== "sqlite" || !values.db) {
    throw new Error("--store is memory, or sqlite with --db <file>");
  }
  const require = createRequire(import.meta.url);
  // The package's main entry is dist/index.cjs; its migration CLI sits beside it.
  const sdkDist = dirname(require.resolve("@a2a-js/sdk"));
  execFileSync(
    process.execPath,
    [join(sdkDist, "cli", "a2a_db.js"), "upgrade", "--url", `sqlite:${values.db}`],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const { default: Database } = await import("better-sqlite3");
  const { Kysely, SqliteDialect } = await import("kysely");
  const { DatabaseTaskStore } = await import("@a2a-js/sdk/server/database");
  const database = new Database(values.db);
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = NORMAL");
  return new DatabaseTaskStore(new Kysely({ dialect: new SqliteDialect({ database }) }));
}

const agentMessage = (taskId, contextId, text) => ({
  messageId: crypto.randomUUID(),
  role: Role.ROLE_AGENT,
  parts: [part(text)],
  contextId,
  taskId,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

const executor = {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const message = ctx.userMessage;
    const text = message.parts
      .flatMap((p) => (p.content?.$case === "text" ? [p.content.value] : []))
      .join("\n");
    const status = (state, reply) =>
      bus.publish({
        kind: "statusUpdate",
        data: {
          taskId,
          contextId,
          status: { state, message: reply, timestamp: new Date().toISOString() },
          metadata: undefined,
        },
      });
    const artifact = (artifactId, name, parts, append, lastChunk) =>
      bus.publish({
        kind: "artifactUpdate",
        data: {
          taskId,
          contextId,
          artifact: {
            artifactId,
            name,
            description: "",
            parts,
            metadata: undefined,
            extensions: [],
          },
          append,
          lastChunk,
          metadata: undefined,
        },
      });
    bus.publish({
      kind: "task",
      data: {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined },
        artifacts: [],
        history: [message],
        metadata: undefined,
      },
    });
    status(TaskState.TASK_STATE_WORKING);
    const reply = crypto.randomUUID();
    const words = text.split(/(?<= )/);
    for (const [i, word] of words.entries()) {
      artifact(reply, "response", [part(word)], i > 0, false);
    }
    artifact(reply, "response", [part("")], true, true);
    const state = { turns: 1, last_message: text };
    artifact("state", "state", [{ content: { $case: "data", value: state } }], false, true);
    status(TaskState.TASK_STATE_COMPLETED, agentMessage(taskId, contextId, text));
    bus.finished();
  },
  async cancelTask() {},
};

const card = {
  name: "echo",
  description: "Streams back the last user message (no delay).",
  // The SDK answers only the protocol versions its card's interfaces declare.
  supportedInterfaces: [
    { url: "/a2a/jsonrpc", protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
    { url: "/a2a/rest", protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" },
  ],
  version: "1.0.0",
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain", "application/json"],
  skills: [],
  signatures: [],
};

const handler = new DefaultRequestHandler(card, await taskStore(), executor);
const app = express();
app.get("/ok", (_req, res) => res.send("ok"));
app.use(
  "/a2a/jsonrpc",
  jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
);
app.use(
  "/a2a/rest",
  restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
);
const server = app.listen(Number(values.port), "127.0.0.1", () => {
  process.stdout.write(`listening on ${server.address().port}\n`);
});
