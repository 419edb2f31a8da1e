/**
 * The door to the config file's validator, precompiled from `configFileSchema` by
 * `npm run generate` (scripts/build-config-validator.mjs). Apart from index.ts so that reading
 * a config does not load the ACP and AG-UI validators.
 */
export {
  type ConfigFileValidator,
  configSchemaDigest,
  validate as validateConfigFile,
} from "./generated/config-validator.js";
