/**
 * The layer check (`npm run lint`): which folder of src/ may import which. docs/architecture.md
 * draws the same layers and says why; a rule changed here is a paragraph to change there.
 *
 * Type-only imports count (`tsPreCompilationDeps`): a layer that needs another's types depends
 * on it as much as one that calls it.
 */

/** Composition roots: they wire everything together, so nothing imports them. */
const ROOTS = "^src/(app|server|cli)\\.ts$|^src/cli/";
/** Everything below the engine: pure processing, storage, settings, agents, shared helpers. */
const BELOW_ENGINE =
  "^src/(storage|pipeline|validation|config|adapters|auth|webhooks|metrics|bridge|retention|telemetry|util)/";
/**
 * The folders of src/http/ that every face shares (plugins, streams, serving AG-UI events of
 * runs); every other folder of src/http/ is a face (or the inspector), and a new folder is one too.
 */
const HTTP_SHARED = "plugins|streaming|agui-runs";
const FACE = `^src/http/(?!(?:${HTTP_SHARED})/)([^/]+)/`;

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import cycle makes neither module understandable (or loadable) alone.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "no-importing-composition-roots",
      severity: "error",
      comment: "app.ts, server.ts and the CLI assemble the layers; no layer reaches back up to them.",
      from: { path: "^src/", pathNot: ROOTS },
      to: { path: ROOTS },
    },
    {
      name: "lower-layers-not-to-engine-or-http",
      severity: "error",
      comment:
        "Storage, pipeline, validation, config, adapters, auth, webhooks, the bridge and the shared helpers serve the engine and HTTP; they never import them. The one exception is the PostgreSQL frame bus implementing the engine's FrameBus interface (engine/frame-bus.ts).",
      from: { path: BELOW_ENGINE, pathNot: "^src/storage/postgres/frame-bus\\.ts$" },
      to: { path: "^src/(engine|http)/" },
    },
    {
      name: "postgres-bus-only-to-the-bus-interface",
      severity: "error",
      comment: "The PostgreSQL frame bus may import the engine's bus interface, nothing else of it.",
      from: { path: "^src/storage/postgres/frame-bus\\.ts$" },
      to: { path: "^src/(engine|http)/", pathNot: "^src/engine/frame-bus\\.ts$" },
    },
    {
      name: "engine-not-to-http",
      severity: "error",
      comment: "The engine runs runs whoever asks; HTTP is one way of asking.",
      from: { path: "^src/engine/" },
      to: { path: "^src/http/" },
    },
    {
      name: "adapters-not-to-engine-http-storage",
      severity: "error",
      comment: "An adapter turns a run input into AG-UI events; it knows nothing of runs, storage or HTTP.",
      from: { path: "^src/adapters/" },
      to: { path: "^src/(engine|http|storage|webhooks)/" },
    },
    {
      name: "adapter-options-are-data",
      severity: "error",
      comment:
        "An adapter's option schema and type (adapters/*-options.ts) are composed by the config schema; they import only the shared schema fragments, so the config never loads an adapter.",
      from: { path: "^src/adapters/[^/]+-options\\.ts$" },
      to: { path: "^src/", pathNot: "^src/config/schema-fragments\\.ts$" },
    },
    {
      name: "config-only-to-adapter-options",
      severity: "error",
      comment: "The config reads adapters' option schemas and types, never an adapter itself.",
      from: { path: "^src/config/" },
      to: { path: "^src/adapters/", pathNot: "^src/adapters/[^/]+-options\\.ts$" },
    },
    {
      name: "config-only-to-retention-settings",
      severity: "error",
      comment:
        "The config composes the retention section's schema and defaults (retention/settings.ts), never the sweeper.",
      from: { path: "^src/config/" },
      to: { path: "^src/retention/", pathNot: "^src/retention/settings\\.ts$" },
    },
    {
      name: "retention-through-the-storage-contract",
      severity: "error",
      comment:
        "The sweeper drives storage's retention batches through the contract (storage/types.ts, storage/retention.ts); its settings file is data for the config.",
      from: { path: "^src/retention/" },
      to: {
        path: "^src/",
        pathNot: "^src/retention/|^src/storage/(types|retention)\\.ts$|^src/util/(errors|ids|logging)\\.ts$",
      },
    },
    {
      name: "bridge-is-pure-mapping",
      severity: "error",
      comment:
        "The protocol mappings: pure functions over typed values. Besides its own files it may import pipeline types, validation, ids and errors only.",
      from: { path: "^src/bridge/" },
      to: {
        path: "^src/",
        pathNot: "^src/(bridge|pipeline|validation)/|^src/util/(ids|errors)\\.ts$",
      },
    },
    {
      name: "bridge-not-to-http-frameworks",
      severity: "error",
      comment: "The bridge knows no HTTP: no Fastify, no request or reply.",
      from: { path: "^src/bridge/" },
      to: { path: "node_modules/(fastify|fastify-plugin|@fastify)/" },
    },
    {
      name: "faces-apart",
      severity: "error",
      comment:
        "A face (a folder of src/http/ other than the shared ones) never imports another face: what two faces need lives in the shared files of src/http/ or in the bridge.",
      from: { path: FACE },
      to: { path: FACE, pathNot: "^src/http/$1/" },
    },
    {
      name: "http-shared-names-no-face",
      severity: "error",
      comment:
        "The plumbing every face shares (src/http/*.ts and its shared folders) imports no face: a face is added or switched off without touching it.",
      from: { path: `^src/http/([^/]+\\.ts$|(${HTTP_SHARED})/)` },
      to: { path: FACE },
    },
    {
      name: "bridge-protocols-apart",
      severity: "error",
      comment:
        "Each protocol's mapping is its own folder of src/bridge/; one protocol's mapping does not import another's (ACP's is the run command every face builds, so it is the exception).",
      from: { path: "^src/bridge/([^/]+)/" },
      to: { path: "^src/bridge/[^/]+/", pathNot: "^src/bridge/($1|acp)/" },
    },
    {
      name: "http-not-to-storage-implementations",
      severity: "error",
      comment:
        "HTTP reaches storage through the engine's services; at most it names the contract's types (storage/types.ts).",
      from: { path: "^src/http/" },
      to: { path: "^src/storage/", pathNot: "^src/storage/types\\.ts$" },
    },
    {
      name: "storage-implementations-behind-the-contract",
      severity: "error",
      comment:
        "The SQLite and PostgreSQL backends are chosen by storage/index.ts (and the PostgreSQL bus by server.ts); everyone else uses the Storage contract.",
      from: { path: "^src/", pathNot: "^src/storage/|^src/server\\.ts$" },
      to: { path: "^src/storage/(sqlite|postgres)/" },
    },
    {
      name: "backends-apart",
      severity: "error",
      comment: "Neither backend imports the other; what they share lives in src/storage/.",
      from: { path: "^src/storage/(sqlite|postgres)/" },
      to: { path: "^src/storage/(sqlite|postgres)/", pathNot: "^src/storage/$1/" },
    },
    {
      name: "pg-only-in-postgres-storage",
      severity: "error",
      comment: "The PostgreSQL driver belongs to the PostgreSQL backend alone.",
      from: { path: "^src/", pathNot: "^src/storage/postgres/" },
      to: { path: "node_modules/(pg/|pg-)" },
    },
    {
      name: "telemetry-at-the-bottom",
      severity: "error",
      comment:
        "Tracing is used by every layer (the logger's trace ids, the engine's spans, adapters' outgoing headers); it imports nothing of the server.",
      from: { path: "^src/telemetry/" },
      to: { path: "^src/", pathNot: "^src/telemetry/" },
    },
    {
      name: "opentelemetry-only-in-telemetry",
      severity: "error",
      comment:
        "The OpenTelemetry packages are loaded only when tracing is on: only src/telemetry/ names them, and its index.ts (what everyone imports) only through a dynamic import of sdk.ts.",
      from: { path: "^src/", pathNot: "^src/telemetry/(sdk|segment-span)\\.ts$" },
      to: { path: "node_modules/(@opentelemetry|@fastify/otel)/" },
    },
    {
      name: "telemetry-sdk-loaded-lazily",
      severity: "error",
      comment:
        "Only telemetry/index.ts loads the SDK, with a dynamic import once tracing is on; a static import would load it in every server.",
      from: { path: "^src/", pathNot: "^src/telemetry/" },
      to: { path: "^src/telemetry/", pathNot: "^src/telemetry/(index|types)\\.ts$" },
    },
    {
      name: "better-sqlite3-only-in-sqlite-storage",
      severity: "error",
      comment: "The SQLite driver belongs to the SQLite backend alone.",
      from: { path: "^src/", pathNot: "^src/storage/sqlite/" },
      to: { path: "node_modules/better-sqlite3/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    // node_modules may be a link to a shared install: keep the path as written, not resolved.
    preserveSymlinks: true,
  },
};
