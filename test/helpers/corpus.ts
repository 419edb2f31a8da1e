/**
 * The AG-UI 1.0 conformance corpus (test/fixtures/ag-ui-conformance, copied from the AG-UI
 * project; its README says from where) and the tables that say how this server is held to it.
 * Shared by the pipeline-level replay (test/pipeline) and the end-to-end replay through the
 * scripted adapter (test/adapters).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const corpusDir = path.resolve(repoRoot, "test/fixtures/ag-ui-conformance");

export interface Expectation {
  outcome: "completed" | "failed";
  errorContains?: string;
  runError?: string;
  state?: unknown;
  messages?: Array<Record<string, unknown>>;
  messageCount?: number;
  warnings?: string[];
  noWarnings?: boolean;
  eventTypes?: string[];
  eventTypesAbsent?: string[];
  eventPaths?: Record<string, unknown>;
  eventAbsentPaths?: string[];
  request?: { protocolVersion?: string; messages?: unknown[] };
  requestAbsentPaths?: string[];
}

export interface Fixture {
  name: string;
  file: string;
  stream: Array<Record<string, unknown>>;
  input?: { messages?: unknown[] };
  client?: { maxProtocolVersion?: string };
  expect: Expectation;
  expectOverrides?: Record<string, Partial<Expectation> & { intentional?: string }>;
}

export const fixtures: Fixture[] = readdirSync(corpusDir)
  .filter((file) => file.endsWith(".json"))
  .sort()
  .map((file) => ({ file, ...JSON.parse(readFileSync(path.join(corpusDir, file), "utf8")) }));

/** Override keys that would name this implementation's lane, were the corpus to add one. */
export const OUR_LANES = ["typescript", "ts", "javascript", "js", "node"];

export function expectationFor(fixture: Fixture): Expectation {
  const lane = OUR_LANES.find((key) => fixture.expectOverrides?.[key] !== undefined);
  if (!lane) return fixture.expect;
  const { intentional: _why, ...override } = fixture.expectOverrides![lane]!;
  return { ...fixture.expect, ...override } as Expectation;
}

/**
 * Fixtures that pin a client-side downgrade shim for a peer capped below 1.0. The server
 * never caps the AG-UI version it consumes: it speaks 1.0 to every adapter, and a pre-1.0
 * remote agent's legacy shapes are upgraded by the always-on compatibility boundary.
 */
export const INAPPLICABLE: Record<string, string> = {
  "era-0-0-39-flattens-content":
    "pins the 0.0.39 downgrade shim: the request to a peer capped at 0.0.39 has its content parts flattened to text, with a warning. The server sends AG-UI 1.0 input (content parts intact) and has no per-peer version ceiling.",
  "era-0-0-57-subagent-dropped-with-warning":
    "pins the 0.0.57 downgrade shim: a client capped at 0.0.57 drops SUBAGENT_* events with a warning. The server speaks 1.0 and keeps subagent lifecycle (pinned by era-current-peer-keeps-modern-content).",
  "era-pinned-peer-omits-protocol-version":
    "pins the request to a peer capped at 0.0.57 omitting protocolVersion. The server has no per-peer ceiling and always declares AGUI_PROTOCOL_VERSION (pinned by current-peer-declares-protocol-version).",
};

/**
 * Fixtures with a `client.maxProtocolVersion` that nonetheless apply: what they pin is the
 * always-on compatibility boundary, not the version-gated shim, so the ceiling is ignored.
 */
export const CEILING_IGNORED: Record<string, string> = {
  "era-0-0-45-thinking-translated":
    "THINKING_* translation to REASONING_* is the always-on inbound boundary (src/pipeline/compat.ts), not the 0.0.45-gated shim",
  "era-0-0-47-upgrades-binary-content":
    "the legacy binary → media part upgrade is always on for outgoing input (acpToAguiMessages), whatever the peer's version",
};

/**
 * Where our wording differs from the reference client's (Ajv vs zod), the keywords that
 * name the same fault. Every other `errorContains` is asserted verbatim.
 */
export const ERROR_KEYWORDS: Record<string, string[]> = {
  // zod: `expected "reasoning"`; Ajv: `/role must be "reasoning"`.
  "reasoning-message-wrong-role-fatal": ["/role", '"reasoning"'],
  // zod: `expected object, received array`; Ajv: `/outcome must be object`.
  "unknown-outcome-array-fatal": ["/outcome", "must be object"],
};

export const isClientShimFixture = (f: Fixture) =>
  f.client?.maxProtocolVersion !== undefined || f.expect.requestAbsentPaths !== undefined;

/** `expected` is contained in `actual`: objects by key (recursively), arrays element-wise. */
export function subsetMatches(expected: unknown, actual: unknown): boolean {
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((e, i) => subsetMatches(e, actual[i]))
    );
  }
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return false;
    return Object.entries(expected).every(([k, v]) =>
      subsetMatches(v, (actual as Record<string, unknown>)[k]),
    );
  }
  return Object.is(expected, actual);
}

/** Expected messages match, in order, a subsequence of the actual messages. */
export function messagesMatch(expected: unknown[], actual: unknown[]): boolean {
  let at = 0;
  for (const e of expected) {
    while (at < actual.length && !subsetMatches(e, actual[at])) at++;
    if (at === actual.length) return false;
    at++;
  }
  return true;
}
