/**
 * Replays the AG-UI project's own 1.0 conformance corpus (test/fixtures/ag-ui-conformance)
 * through the segment pipeline, which consumes every adapter's stream exactly as an AG-UI
 * client consumes a server's.
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
import { describe, expect, it } from "vitest";
import { acpToAguiMessages } from "../../src/bridge/acp/messages.js";
import { AGUI_PROTOCOL_VERSION } from "../../src/pipeline/index.js";
import {
  CEILING_IGNORED,
  ERROR_KEYWORDS,
  expectationFor,
  fixtures,
  INAPPLICABLE,
  isClientShimFixture,
  messagesMatch,
  OUR_LANES,
  subsetMatches,
} from "../helpers/corpus.js";
import { replay } from "./helpers.js";

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
  it("finds the corpus in the test fixtures", () => {
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
