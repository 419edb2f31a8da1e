import { readFileSync } from "node:fs";
import { schemaPath } from "../util/paths.js";
import { facePlugin } from "./face-plugin.js";
import { PLUGIN } from "./plugins/names.js";

/**
 * Health, readiness and the two bundled protocol documents, served byte-for-byte as shipped
 * (read once at start-up; descriptors point `custom_streaming_update` at the AG-UI one).
 */
export const metaRoutes = facePlugin(PLUGIN.meta, async (app) => {
  const acpDocument = readFileSync(schemaPath("acp.openapi.json"));
  const aguiDocument = readFileSync(schemaPath("ag-ui.schema.json"));
  const json = "application/json; charset=utf-8";

  app.get("/openapi.json", async (_request, reply) => reply.type(json).send(acpDocument));
  app.get("/schemas/acp.openapi.json", async (_request, reply) =>
    reply.type(json).send(acpDocument),
  );
  app.get("/schemas/ag-ui.schema.json", async (_request, reply) =>
    reply.type("application/schema+json; charset=utf-8").send(aguiDocument),
  );

  app.get("/healthz", async (_request, reply) => reply.type(json).send(JSON.stringify("ok")));
  app.get("/readyz", async (_request, reply) => {
    const ready = await app.deps.ops.ready();
    return reply
      .code(ready ? 200 : 503)
      .type(json)
      .send(JSON.stringify(ready ? "ready" : "storage is not available"));
  });
});
