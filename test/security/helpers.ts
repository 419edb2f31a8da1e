import { parseConfig } from "../../src/config/load.js";
import { DEFAULT_SETTINGS, mergeSettings, type SettingsLayer } from "../../src/config/settings.js";
import type { Storage } from "../../src/storage/types.js";
import { build, type TestApp } from "../helpers/app.js";

/**
 * Builds the app with the config file's `server:` section applied, as `acp-agui serve` does
 * (the shared `build` helper takes settings only from its caller), then `overrides`.
 */
export async function buildServing(
  config: string | Record<string, unknown>,
  options: { overrides?: SettingsLayer; storage?: Storage; unchecked?: boolean } = {},
): Promise<TestApp> {
  const yaml = typeof config === "string" ? config : JSON.stringify(config);
  const parsed = await parseConfig(yaml, { filename: "test.yaml", baseDir: process.cwd() });
  const settings = mergeSettings(
    DEFAULT_SETTINGS,
    parsed.server,
    { keepAliveSeconds: 0 },
    options.overrides,
  );
  return build({ yaml, settings, storage: options.storage, unchecked: options.unchecked });
}

export const echoAgent = (name = "echo", extra: Record<string, unknown> = {}) => ({
  name,
  version: "1.0.0",
  description: `echo agent ${name}`,
  adapter: { type: "echo" },
  ...extra,
});
