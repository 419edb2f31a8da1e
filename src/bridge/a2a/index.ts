/** A2A 1.0 ⇄ ACP/AG-UI: the wire types and the pure mappings (docs/a2a.md). */
export * from "./errors.js";
export * from "./messages.js";
export * from "./parts.js";
export * from "./protojson.js";
export * from "./task.js";
export * from "./task-events.js";
export * from "./types.js";
export * from "./v03.js";
