import { envName, httpUrl, positiveInteger } from "../config/schema-fragments.js";

/**
 * `adapter:` of an OpenAI-compatible chat agent in the config file (closed, including its own
 * `type`).
 */
export const openAiOptionsSchema = {
  type: "object",
  additionalProperties: false,
  required: ["baseUrl", "model"],
  properties: {
    type: { const: "openai" },
    baseUrl: httpUrl,
    model: { type: "string", minLength: 1 },
    apiKeyEnv: envName,
    systemPrompt: { type: "string" },
    temperature: { type: "number", minimum: 0, maximum: 2 },
    maxTokens: positiveInteger,
    topP: { type: "number", minimum: 0, maximum: 1 },
  },
} as const;

/** An OpenAI-compatible agent's adapter, as written and once loaded (nothing is filled in). */
export interface OpenAiAdapterConfig {
  type: "openai";
  baseUrl: string;
  model: string;
  /** Name of the environment variable holding the API key (read by the adapter, not here). */
  apiKeyEnv?: string;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
  topP?: number;
}
