import { readFileSync } from "node:fs";
import { packageVersion, schemaPath } from "../util/paths.js";
import { facePlugin } from "./face-plugin.js";
import { PLUGIN } from "./plugins/names.js";

/**
 * Health, readiness and the two bundled protocol documents, served byte-for-byte as shipped
 * (read once at start-up; descriptors point `custom_streaming_update` at the AG-UI one).
 */
export type MetaOptions = {
  /** Where `GET /` sends a browser: the inspector's path, or null when it is off. */
  inspectorPath: string | null;
  /** The faces that are on and their paths, for `GET /` without an inspector. */
  faces: Array<{ face: string; path: string }>;
};

export const metaRoutes = facePlugin<MetaOptions>(PLUGIN.meta, async (app, options) => {
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

  // The URL the server prints: the inspector for a browser, else what is served where.
  app.get("/", async (_request, reply) => {
    if (options.inspectorPath !== null) return reply.redirect(`${options.inspectorPath}/`);
    return reply.type(json).send(
      JSON.stringify({
        service: "acp-agui",
        version: packageVersion(),
        openapi: "/openapi.json",
        faces: options.faces,
      }),
    );
  });
  app.get("/healthz", async (_request, reply) => reply.type(json).send(JSON.stringify("ok")));
  app.get("/readyz", async (_request, reply) => {
    const ready = await app.deps.ops.ready();
    return reply
      .code(ready ? 200 : 503)
      .type(json)
      .send(JSON.stringify(ready ? "ready" : "storage is not available"));
  });
});
