import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { type BuildAppOptions, buildApp } from "../../src/app.js";
import { parseConfig } from "../../src/config/load.js";
import { AgentRegistry } from "../../src/config/registry.js";
import { DEFAULT_SETTINGS, type ServerSettings } from "../../src/config/settings.js";
import { createStorage } from "../../src/storage/index.js";
import type { Storage } from "../../src/storage/types.js";
import { assertSpecResponse } from "./spec.js";

export const SAMPLE_AGENTS_YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message.
    adapter: { type: echo }
`;

export interface TestApp {
  app: FastifyInstance;
  storage: Storage;
  registry: AgentRegistry;
  /** inject + spec check: the response must match what the ACP spec declares. */
  call(
    method: string,
    url: string,
    payload?: unknown,
    headers?: Record<string, string>,
  ): Promise<Reply>;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  body: unknown;
  raw: string;
  headers: Record<string, unknown>;
}

export interface BuildOptions {
  yaml?: string;
  storage?: Storage;
  settings?: Partial<ServerSettings>;
  /** Skip the spec check (for routes outside the ACP spec). */
  unchecked?: boolean;
  baseDir?: string;
  /** The app's logger (default: the app's own, from the settings' level). */
  logger?: Logger;
  /** Where the built inspector is read from (default: dist/ui). */
  inspectorRoot?: string;
  /** How webhook host names resolve (default: DNS). */
  resolveWebhookHost?: BuildAppOptions["resolveWebhookHost"];
}

/** Builds the app in-process on an in-memory SQLite storage (or the one given). */
export async function build(options: BuildOptions = {}): Promise<TestApp> {
  const config = await parseConfig(options.yaml ?? SAMPLE_AGENTS_YAML, {
    filename: "test.yaml",
    baseDir: options.baseDir ?? process.cwd(),
  });
  const registry = new AgentRegistry(config);
  const storage = options.storage ?? createStorage(":memory:");
  await storage.open();
  const settings: ServerSettings = {
    ...DEFAULT_SETTINGS,
    keepAliveSeconds: 0,
    ...options.settings,
  };
  const app = await buildApp({
    settings,
    registry,
    storage,
    logger: options.logger,
    inspectorRoot: options.inspectorRoot,
    resolveWebhookHost: options.resolveWebhookHost,
  });
  await app.ready();
  return {
    app,
    storage,
    registry,
    async call(method, url, payload, headers) {
      const response = await app.inject({
        method: method as "GET",
        url,
        ...(payload === undefined
          ? {}
          : typeof payload === "string"
            ? { payload }
            : { payload: payload as object }),
        headers,
      });
      const contentType = response.headers["content-type"] as string | undefined;
      const body = assertSpecResponse(method, url, response.statusCode, contentType, response.body);
      return { status: response.statusCode, body, raw: response.body, headers: response.headers };
    },
    async close() {
      await app.close();
      if (!options.storage) await storage.close();
    },
  };
}
