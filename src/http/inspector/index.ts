import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import type { Metrics } from "../../metrics/metrics.js";
import { sendError } from "../errors.js";
import { PLUGIN, ROUTE_PREREQUISITES } from "../plugins/names.js";
import { inspectorApi } from "./api.js";
import { type InspectorAsset, loadInspectorAssets } from "./assets.js";

export { loadInspectorAssets } from "./assets.js";

/**
 * The browser inspector: its built files under `path` (public, like any web page's code), and
 * the small JSON API it adds under `path/api` (behind the API keys, like the rest of the API;
 * the page asks for a key and sends it as `Authorization: Bearer`).
 */
export interface Inspector {
  path: string;
  /** Undefined when the inspector was never built: its path then says how to build it. */
  assets: Map<string, InspectorAsset> | undefined;
}

export function createInspector(path: string, root?: string): Inspector {
  return { path, assets: loadInspectorAssets(root) };
}

/** The paths served without a key: the page, its files, and the redirect to the page. */
export function inspectorOpenPaths(inspector: Inspector): string[] {
  const { path, assets } = inspector;
  return [path, `${path}/`, ...[...(assets?.keys() ?? [])].map((name) => `${path}/${name}`)];
}

/**
 * The page may run scripts and styles of its own origin only and talk to this server only:
 * nothing from a CDN, nothing inline, never framed.
 */
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

export interface InspectorPluginOptions {
  inspector: Inspector;
  metrics?: Metrics;
}

/** The inspector's page and API; its open paths were given to the key check (see above). */
export const inspectorPlugin = fp<InspectorPluginOptions>(
  async (app, options) => registerInspector(app, options),
  {
    name: PLUGIN.inspector,
    fastify: "5.x",
    dependencies: ROUTE_PREREQUISITES,
    decorators: { fastify: ["deps"] },
  },
);

async function registerInspector(
  app: FastifyInstance,
  { inspector, metrics }: InspectorPluginOptions,
): Promise<void> {
  const { path, assets } = inspector;
  await app.register(inspectorApi, { prefix: `${path}/api`, metrics });

  // The page's files are addressed relative to it, so the page must be `path/`.
  app.get(path, async (request, reply) => {
    const query = request.url.slice(request.url.split("?")[0]!.length);
    return reply.redirect(`${path}/${query}`, 302);
  });

  if (!assets) {
    app.log.warn({ path }, "the inspector is not built (run `npm run build`); not serving it");
    app.get(`${path}/`, async (_request, reply) =>
      sendError(reply, 503, "the inspector is not built: run `npm run build`"),
    );
    return;
  }

  const index = assets.get("index.html")!;
  app.get(`${path}/`, async (request, reply) => send(request, reply, index));
  app.get(`${path}/*`, async (request, reply) => {
    const name = (request.params as { "*": string })["*"];
    // `index.html` is served at `path/` only, so the page has one address.
    const asset = name === "index.html" ? undefined : assets.get(name);
    if (!asset) return sendError(reply, 404, `no inspector file ${name}`);
    return send(request, reply, asset);
  });
}

function send(request: FastifyRequest, reply: FastifyReply, asset: InspectorAsset) {
  reply
    .headers(PAGE_HEADERS)
    .header("content-type", asset.contentType)
    .header("etag", asset.etag)
    .header("vary", "accept-encoding")
    .header(
      "cache-control",
      // The page itself is revalidated on every load, so a new build shows at once.
      asset.immutable ? "public, max-age=31536000, immutable" : "no-cache",
    );
  if (request.headers["if-none-match"] === asset.etag) return reply.code(304).send();
  const gzip = asset.gzipped && /\bgzip\b/.test(String(request.headers["accept-encoding"] ?? ""));
  if (gzip) reply.header("content-encoding", "gzip");
  return reply.send(gzip ? asset.gzipped : asset.body);
}
