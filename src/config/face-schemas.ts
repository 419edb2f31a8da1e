/**
 * The `server:` sections of the faces and the inspector: each on or off and where it is served
 * (docs/architecture.md, "Adding a face"), with the face's own settings. Composed into the config
 * file's schema (schema.ts); a new face adds its section here.
 */

import { nonNegativeInteger } from "./schema-fragments.js";

/**
 * A path the server serves something under (the inspector, a face): one or more segments, no
 * trailing slash, and not under a path of the ACP face, the AG-UI face's default or the probes
 * (it would shadow or clash). The AG-UI face's own base path may be its default (`ownPath`).
 */
function servedPath(example: string, ownPath?: "ag-ui") {
  const reserved = ["agents", "threads", "runs", "ag-ui", "schemas", "healthz", "readyz", "metrics"]
    .filter((segment) => segment !== ownPath)
    .concat("openapi\\.json");
  const named = ["/agents", "/threads", "/runs", "/ag-ui", "/schemas", "/metrics"]
    .filter((path) => path !== `/${ownPath}`)
    .join(", ");
  return {
    type: "string",
    pattern: `^/(?!(${reserved.join("|")})(/|$))[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*$`,
    "x-expected": `a path such as ${example} (no trailing slash, not under ${named} or the probes)`,
  } as const;
}

/**
 * A face's settings section (`server.<face>`): on or off, where it is served when it has a path
 * of its own (docs/architecture.md, "Adding a face"), and the face's own settings (`more`).
 */
function faceSection(
  exampleBasePath?: string,
  ownPath?: "ag-ui",
  more: Record<string, object> = {},
) {
  return {
    type: "object",
    additionalProperties: false,
    properties: {
      enabled: { type: "boolean" },
      ...(exampleBasePath ? { basePath: servedPath(exampleBasePath, ownPath) } : {}),
      ...more,
    },
  };
}

/** `server.<face>` (and `server.inspector`) sections, by key. */
export const faceSchemas = {
  inspector: {
    type: "object",
    additionalProperties: false,
    properties: { enabled: { type: "boolean" }, path: servedPath("/ui") },
  },
  acp: faceSection(),
  agui: faceSection("/ag-ui", "ag-ui"),
  copilotkit: faceSection("/copilotkit"),
  langgraph: faceSection("/langgraph"),
  mcp: faceSection("/mcp", undefined, {
    allowedOrigins: {
      type: "array",
      items: { type: "string", pattern: "^(\\*|https?://[^/]+)$", maxLength: 300 },
      maxItems: 100,
    },
  }),
  a2a: faceSection("/a2a", undefined, {
    maxPushConfigsPerTask: { type: "integer", minimum: 1, maximum: 1000000 },
    cardMaxAgeSeconds: nonNegativeInteger,
    grpc: {
      type: "object",
      additionalProperties: false,
      properties: {
        enabled: { type: "boolean" },
        port: { type: "integer", minimum: 0, maximum: 65535 },
        host: { type: "string", minLength: 1 },
        publicAddress: {
          type: "string",
          pattern: "^[^\\s/]+:[0-9]{1,5}$",
          "x-expected": "host:port, such as a2a.example.com:443",
        },
      },
    },
  }),
};
