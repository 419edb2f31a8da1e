/** `adapter:` of an agent loaded from a JavaScript module (closed, including its own `type`). */
export const moduleOptionsSchema = {
  type: "object",
  additionalProperties: false,
  required: ["path"],
  properties: {
    type: { const: "module" },
    path: { type: "string", minLength: 1 },
    export: { type: "string", minLength: 1 },
  },
} as const;

/** A module agent's adapter once loaded. */
export interface ModuleAdapterConfig {
  type: "module";
  /** As written in the config. */
  path: string;
  /** What to `import()`: a `file://` URL for a file path, else the package name as written. */
  specifier: string;
  /** The named export holding the adapter (default `"default"`). */
  export: string;
}

export const MODULE_DEFAULTS = { export: "default" } as const;
