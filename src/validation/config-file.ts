/**
 * The door to the validators `npm run generate` precompiles for reading a config
 * (scripts/build-config-validator.mjs): the config file's own, and the meta-schema check of the
 * schemas in its `specs`. Apart from index.ts so that reading a config does not load the ACP
 * and AG-UI validators.
 */
export {
  digest as configSchemaDigest,
  validate as validateConfigFile,
} from "./generated/config-validator.js";
export {
  digest as userSchemaOptionsDigest,
  validate as validateUserSchema,
} from "./generated/user-schema-validator.js";
