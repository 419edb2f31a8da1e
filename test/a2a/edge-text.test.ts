/**
 * Edge text in every field the A2A face takes (lone surrogates, U+2028/U+2029, NUL, emoji and
 * other odd characters), on both bindings and both storage backends: each either round-trips or
 * is refused with InvalidParams naming the field (TaskNotFound for an id only looked up); never an
 * internal error.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStorage } from "../../src/storage/index.js";
import type { Storage } from "../../src/storage/types.js";
import { EDGE_TEXT as FUZZ_EDGE_TEXT } from "../fuzz/arbitraries.js";
import { build, type TestApp } from "../helpers/app.js";
import { openDisposable, requirePostgres } from "../storage/pg-helpers.js";

// biome-ignore lint/suspicious/noExplicitAny: the wire's JSON, read freely by the assertions
type Wire = any;

/** The fuzz tests' edge text, and line ends. */
const EDGE_TEXT = [...FUZZ_EDGE_TEXT, "\r\n\t"];

const V1 = { "content-type": "application/json", "a2a-version": "1.0" };

const backends: [string, () => Promise<Storage>][] = [
  ["SQLite", async () => createStorage(":memory:")],
  [
    "PostgreSQL",
    async () => {
      await requirePostgres();
      return openDisposable();
    },
  ],
];

describe.each(backends)("edge text on the A2A face (%s)", (_name, open) => {
  let t: TestApp;
  let storage: Storage;
  beforeAll(async () => {
    storage = await open();
    if (storage.kind === "sqlite") await storage.open();
    t = await build({
      storage,
      unchecked: true,
      baseDir: `${process.cwd()}/test/fixtures/modules`,
      yaml: `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes text.
    adapter: { type: echo }
  - name: media
    version: 1.0.0
    description: Takes files.
    adapter: { type: module, path: ./media-agent.mjs }
`,
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await storage?.close();
  });

  const rpc = async (agent: string, method: string, params: unknown) => {
    const response = await t.app.inject({
      method: "POST",
      url: `/a2a/${agent}`,
      headers: V1,
      payload: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    expect(response.statusCode, response.body).toBeLessThan(500);
    const body = JSON.parse(response.body) as Wire;
    expect(body.error?.code, response.body).not.toBe(-32603);
    return body;
  };
  const rest = async (path: string, body: unknown) => {
    const response = await t.app.inject({
      method: "POST",
      url: `/a2a/media${path}`,
      headers: V1,
      payload: JSON.stringify(body),
    });
    expect(response.statusCode, response.body).toBeLessThan(500);
    return { status: response.statusCode, body: JSON.parse(response.body) as Wire };
  };
  const message = (extra: Record<string, unknown>) => ({
    messageId: randomUUID(),
    role: "ROLE_USER",
    parts: [{ text: "hi" }],
    ...extra,
  });
  /** Refused as invalid with a message naming `field`, or answered. */
  const refusedNaming = (body: Wire, field: string) => {
    expect(body.error.code, JSON.stringify(body)).toBe(-32602);
    expect(body.error.message).toContain(field);
  };

  it.each(EDGE_TEXT)(
    "round-trips %j in a text part, a messageId, a contextId, metadata and data",
    async (edge) => {
      const contextId = `ctx-${edge}`;
      const sent = await rpc("echo", "SendMessage", {
        message: message({
          messageId: `m-${edge}`,
          contextId,
          parts: [{ text: `say ${edge}` }],
          metadata: { [edge]: edge },
        }),
      });
      const task = sent.result.task;
      expect(task.contextId).toBe(contextId);
      expect(task.history[0]).toMatchObject({
        messageId: `m-${edge}`,
        parts: [{ text: `say ${edge}` }],
      });
      const said = task.artifacts
        .filter((a: Wire) => a.name === "response")
        .flatMap((a: Wire) => a.parts.map((p: Wire) => p.text))
        .join("");
      expect(said).toBe(`say ${edge}`);
      // The same context again is the same conversation.
      const again = await rpc("echo", "ListTasks", { contextId });
      expect(again.result.tasks.map((x: Wire) => x.id)).toEqual([task.id]);
      const data = await rpc("echo", "SendMessage", {
        message: message({ parts: [{ data: { [edge]: [edge] } }] }),
      });
      expect(JSON.parse(data.result.task.history[0].parts[0].text)).toEqual({ [edge]: [edge] });
    },
  );

  it.each(EDGE_TEXT)("round-trips %j in a file's name and URL, on both bindings", async (edge) => {
    const safe = encodeURIComponent(edge.replace(/[\ud800-\udfff]/g, "_"));
    const part = {
      url: `https://files.example.com/${safe}`,
      filename: edge,
      mediaType: "application/pdf",
    };
    const sent = await rpc("media", "SendMessage", { message: message({ parts: [part] }) });
    expect(sent.result.task.history[0].parts).toEqual([part]);
    const viaRest = await rest("/message:send", { message: message({ parts: [part] }) });
    expect(viaRest.body.task.history[0].parts).toEqual([part]);
  });

  it.each(EDGE_TEXT)(
    "refuses or round-trips %j in a push config, naming the field",
    async (edge) => {
      const task = (await rpc("echo", "SendMessage", { message: message({}) })).result.task;
      for (const [field, config] of [
        ["id", { id: edge, url: "https://hooks.example.com/a" }],
        ["token", { token: edge, url: "https://hooks.example.com/a" }],
        [
          "authentication.scheme",
          { authentication: { scheme: edge }, url: "https://hooks.example.com/a" },
        ],
        [
          "credentials",
          {
            authentication: { scheme: "Bearer", credentials: edge },
            url: "https://hooks.example.com/a",
          },
        ],
        ["url", { url: `https://hooks.example.com/${edge}` }],
      ] as const) {
        const created = await rpc("echo", "CreateTaskPushNotificationConfig", {
          taskId: task.id,
          ...config,
        });
        if (created.error) {
          refusedNaming(created, field.split(".").at(-1)!);
          continue;
        }
        const read = await rpc("echo", "GetTaskPushNotificationConfig", {
          taskId: task.id,
          id: created.result.id,
        });
        expect(read.result).toEqual(created.result);
      }
    },
  );

  it.each(EDGE_TEXT)("answers %j as a task id or a page token that is not there", async (edge) => {
    for (const method of ["GetTask", "CancelTask", "SubscribeToTask"]) {
      expect((await rpc("echo", method, { id: edge })).error.code).toBe(-32001);
    }
    const resumed = await rpc("echo", "SendMessage", { message: message({ taskId: edge }) });
    expect(resumed.error.code).toBe(-32001);
    refusedNaming(await rpc("echo", "ListTasks", { pageToken: edge }), "pageToken");
    expect((await rpc("echo", "ListTasks", { contextId: edge })).result.tasks).toEqual([]);
  });
});
