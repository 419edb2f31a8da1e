/**
 * Replays the AG-UI project's own 1.0 conformance corpus (../shared/conformance/ag-ui-streams,
 * beside the repository in CI) through the segment pipeline, which consumes every adapter's
 * stream exactly as an AG-UI client consumes a server's.
 *
 * Per fixture, with the expected threadId/runId taken from its first RUN_STARTED:
 * - `outcome`: completed ⇔ no fault (push or end of stream); failed ⇔ a fault.
 * - `errorContains`: the fault names the same fault. Our wording follows @ag-ui/client's for
 *   ordering rules, so the substring is asserted verbatim; validation errors come from Ajv
 *   rather than zod, so those fixtures assert the keywords in ERROR_KEYWORDS instead.
 * - `runError`: some RUN_ERROR terminal carried that message.
 * - `state`, `messages` (in order, each a subset of the message it matches), `messageCount`.
 * - `warnings` (each a substring of some warning) / `noWarnings` (none at all).
 * - `eventTypes`, `eventTypesAbsent`, `eventPaths`, `eventAbsentPaths`: on the canonical
 *   events the pipeline forwards.
 * - `request`: what a consumer sends its producer. The pipeline's part of that is the
 *   declared protocol version and the ACP → AG-UI message conversion, so `protocolVersion`
 *   is checked against AGUI_PROTOCOL_VERSION and `messages` against acpToAguiMessages(input).
 *
 * `expectOverrides` are only applied for a TypeScript/JavaScript lane key; the corpus has
 * none today (only "dotnet"), so the base `expect` is what every fixture is held to.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { AGUI_PROTOCOL_VERSION, acpToAguiMessages } from "../../src/pipeline/index.js";
import { replay } from "./helpers.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const corpusDir = path.resolve(repoRoot, "../shared/conformance/ag-ui-streams");

interface Expectation {
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

interface Fixture {
  name: string;
  file: string;
  stream: Array<Record<string, unknown>>;
  input?: { messages?: unknown[] };
  client?: { maxProtocolVersion?: string };
  expect: Expectation;
  expectOverrides?: Record<string, Partial<Expectation> & { intentional?: string }>;
}

const fixtures: Fixture[] = readdirSync(corpusDir)
  .filter((file) => file.endsWith(".json"))
  .sort()
  .map((file) => ({ file, ...JSON.parse(readFileSync(path.join(corpusDir, file), "utf8")) }));

/** Override keys that would name this implementation's lane, were the corpus to add one. */
const OUR_LANES = ["typescript", "ts", "javascript", "js", "node"];

function expectationFor(fixture: Fixture): Expectation {
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
const INAPPLICABLE: Record<string, string> = {
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
const CEILING_IGNORED: Record<string, string> = {
  "era-0-0-45-thinking-translated":
    "THINKING_* translation to REASONING_* is the always-on inbound boundary (src/pipeline/compat.ts), not the 0.0.45-gated shim",
  "era-0-0-47-upgrades-binary-content":
    "the legacy binary → media part upgrade is always on for outgoing input (acpToAguiMessages), whatever the peer's version",
};

/**
 * Where our wording differs from the reference client's (Ajv vs zod), the keywords that
 * name the same fault. Every other `errorContains` is asserted verbatim.
 */
const ERROR_KEYWORDS: Record<string, string[]> = {
  // zod: `expected "reasoning"`; Ajv: `/role must be "reasoning"`.
  "reasoning-message-wrong-role-fatal": ["/role", '"reasoning"'],
  // zod: `expected object, received array`; Ajv: `/outcome must be object`.
  "unknown-outcome-array-fatal": ["/outcome", "must be object"],
};

const isClientShimFixture = (f: Fixture) =>
  f.client?.maxProtocolVersion !== undefined || f.expect.requestAbsentPaths !== undefined;

/** `expected` is contained in `actual`: objects by key (recursively), arrays element-wise. */
function subsetMatches(expected: unknown, actual: unknown): boolean {
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
function messagesMatch(expected: unknown[], actual: unknown[]): boolean {
  let at = 0;
  for (const e of expected) {
    while (at < actual.length && !subsetMatches(e, actual[at])) at++;
    if (at === actual.length) return false;
    at++;
  }
  return true;
}

function readPath(root: unknown, dotted: string): { found: boolean; value: unknown } {
  let cur: unknown = root;
  for (const key of dotted.split(".")) {
    if (cur === null || typeof cur !== "object" || !Object.hasOwn(cur, key)) {
      return { found: false, value: undefined };
    }
    cur = (cur as Record<string, unknown>)[key];
  }
  return { found: true, value: cur };
}

describe("AG-UI 1.0 conformance corpus", () => {
  it("finds the corpus beside the repository", () => {
    expect(fixtures.length).toBeGreaterThan(50);
  });

  it("records a reason for every fixture that pins a client-side downgrade shim", () => {
    const shimFixtures = fixtures.filter(isClientShimFixture).map((f) => f.name);
    const accounted = [...Object.keys(INAPPLICABLE), ...Object.keys(CEILING_IGNORED)];
    expect(accounted.sort()).toEqual(shimFixtures.sort());
    for (const reason of [...Object.values(INAPPLICABLE), ...Object.values(CEILING_IGNORED)]) {
      expect(reason.length).toBeGreaterThan(40);
    }
  });

  it("holds every fixture to its base expectation, since no override names a TypeScript lane", () => {
    const laneKeys = new Set(fixtures.flatMap((f) => Object.keys(f.expectOverrides ?? {})));
    expect([...laneKeys].filter((key) => OUR_LANES.includes(key))).toEqual([]);
  });

  it("maps error keywords only for fixtures that expect a failure", () => {
    for (const name of Object.keys(ERROR_KEYWORDS)) {
      expect(fixtures.find((f) => f.name === name)?.expect.outcome).toBe("failed");
    }
  });

  it.each(fixtures.filter((f) => INAPPLICABLE[f.name] !== undefined).map((f) => [f.name, f]))(
    "%s (inapplicable: a client downgrade shim) still streams without a fault",
    (_name, fixture) => {
      const first = fixture.stream.find((e) => e.type === "RUN_STARTED");
      const r = replay(fixture.stream, {
        threadId: first?.threadId as string,
        runId: first?.runId as string,
      });
      expect(r.fault).toBeUndefined();
    },
  );

  const applicable = fixtures.filter((f) => INAPPLICABLE[f.name] === undefined);

  it.each(applicable.map((f) => [f.name, f]))("%s", (_name, fixture) => {
    const want = expectationFor(fixture);
    const first = fixture.stream.find((e) => e.type === "RUN_STARTED");
    const r = replay(fixture.stream, {
      threadId: (first?.threadId as string | undefined) ?? "t-conformance",
      runId: (first?.runId as string | undefined) ?? "r-conformance",
    });

    if (want.outcome === "completed") {
      expect(r.fault?.message).toBeUndefined();
    } else {
      expect(r.fault, "the stream must be rejected").toBeDefined();
      const keywords =
        ERROR_KEYWORDS[fixture.name] ?? (want.errorContains ? [want.errorContains] : []);
      for (const keyword of keywords) expect(r.fault!.message).toContain(keyword);
    }

    if (want.runError !== undefined) {
      const errors = r.terminals.filter((t) => t.kind === "error").map((t) => t.message);
      expect(errors).toContain(want.runError);
    }
    if (Object.hasOwn(want, "state")) {
      expect(subsetMatches(want.state, r.seg.state), JSON.stringify(r.seg.state)).toBe(true);
    }
    const messages = r.seg.messages as unknown[];
    if (want.messageCount !== undefined) expect(messages).toHaveLength(want.messageCount);
    if (want.messages !== undefined) {
      expect(messagesMatch(want.messages, messages), JSON.stringify(messages)).toBe(true);
    }

    for (const warning of want.warnings ?? []) {
      expect(
        r.warnings.some((w) => w.includes(warning)),
        `warns about ${warning}`,
      ).toBe(true);
    }
    if (want.noWarnings) expect(r.warnings).toEqual([]);

    const types = r.events.map((e) => e.type);
    if (want.eventTypes && want.outcome === "completed") expect(types).toEqual(want.eventTypes);
    for (const absent of want.eventTypesAbsent ?? []) expect(types).not.toContain(absent);
    for (const [at, value] of Object.entries(want.eventPaths ?? {})) {
      const found = readPath(r.events, at);
      expect(found.found, at).toBe(true);
      expect(found.value).toEqual(value);
    }
    for (const at of want.eventAbsentPaths ?? []) expect(readPath(r.events, at).found).toBe(false);

    if (want.request?.protocolVersion !== undefined) {
      expect(AGUI_PROTOCOL_VERSION).toBe(want.request.protocolVersion);
    }
    if (want.request?.messages !== undefined) {
      expect(acpToAguiMessages(fixture.input?.messages ?? [])).toEqual(want.request.messages);
    }
  });
});
