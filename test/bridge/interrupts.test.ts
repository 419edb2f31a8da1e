import type { Interrupt } from "@ag-ui/core";
import { describe, expect, it } from "vitest";
import {
  interruptType,
  type ResumeValidators,
  resumeEntries,
  toAcpInterrupt,
} from "../../src/bridge/acp/interrupts.js";
import { isDomainError } from "../../src/util/errors.js";

const open = (...interrupts: Array<Partial<Interrupt> & { id: string }>) =>
  interrupts as Interrupt[];
const accepting: ResumeValidators = {
  validatePayload: () => null,
  validateEntry: () => null,
};

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    if (isDomainError(err)) return err.message;
    throw err;
  }
  throw new Error("expected a 422");
}

describe("interrupts", () => {
  it("keys ACP interrupts by type, 'interrupt' when the agent gave no reason", () => {
    const interrupts = open(
      { id: "a", reason: "approval" },
      { id: "b" },
      { id: "c", reason: "approval" },
    );
    expect(interruptType(interrupts[1]!)).toBe("interrupt");
    expect(toAcpInterrupt(interrupts)).toEqual({
      approval: [interrupts[0], interrupts[2]],
      interrupt: interrupts[1],
    });
  });

  it("answers each open interrupt from a payload per type", () => {
    const interrupts = open(
      { id: "a", reason: "approval" },
      { id: "b", reason: "question" },
      { id: "c", reason: "question" },
    );
    expect(
      resumeEntries({ approval: { ok: true }, question: ["x", null] }, interrupts, accepting),
    ).toEqual([
      { interruptId: "a", status: "resolved", payload: { ok: true } },
      { interruptId: "b", status: "resolved", payload: "x" },
      { interruptId: "c", status: "resolved" },
    ]);
  });

  it("refuses a resume that misses, misnames or miscounts interrupts", () => {
    const interrupts = open({ id: "a", reason: "approval" }, { id: "b", reason: "question" });
    expect(refusal(() => resumeEntries({ approval: 1 }, interrupts, accepting))).toBe(
      'resume must answer every open interrupt: missing "question" (open: "approval", "question")',
    );
    expect(
      refusal(() => resumeEntries({ approval: 1, question: 2, other: 3 }, interrupts, accepting)),
    ).toBe(
      'resume names interrupt type "other", but the run\'s open interrupts are of type "approval", "question"',
    );
    const two = open({ id: "a", reason: "q" }, { id: "b", reason: "q" });
    expect(refusal(() => resumeEntries({ q: ["only one"] }, two, accepting))).toBe(
      'resume.q must be an array of 2 payloads, one per open "q" interrupt in order',
    );
  });

  it("takes native AG-UI resume entries, each open interrupt answered once", () => {
    const interrupts = open({ id: "a", reason: "approval" }, { id: "b" });
    const entries = [
      { interruptId: "a", status: "resolved", payload: { ok: true } },
      { interruptId: "b", status: "cancelled" },
    ];
    expect(resumeEntries({ resume: entries }, interrupts, accepting)).toEqual(entries);
    expect(
      refusal(() => resumeEntries({ resume: [entries[0], entries[0]] }, interrupts, accepting)),
    ).toBe('resume[1] answers interrupt "a" twice');
    expect(
      refusal(() =>
        resumeEntries(
          { resume: [{ interruptId: "z", status: "resolved" }] },
          interrupts,
          accepting,
        ),
      ),
    ).toBe('resume[0].interruptId "z" is not an open interrupt of this run');
    expect(refusal(() => resumeEntries({ resume: [entries[0]] }, interrupts, accepting))).toBe(
      'resume must answer every open interrupt: missing "b"',
    );
  });

  it("holds payloads to the descriptor's schema and the interrupt's own responseSchema", () => {
    const interrupts = open({ id: "a", reason: "approval" });
    const validators: ResumeValidators = {
      validatePayload: (type, payload) => (payload === "bad" ? `not a ${type} answer` : null),
      validateResponse: (_interrupt, payload, at) =>
        payload === "off-schema" ? `${at} breaks the responseSchema` : null,
      validateEntry: () => null,
    };
    expect(refusal(() => resumeEntries({ approval: "bad" }, interrupts, validators))).toBe(
      "resume.approval: not a approval answer",
    );
    expect(refusal(() => resumeEntries({ approval: "off-schema" }, interrupts, validators))).toBe(
      "resume.approval: approval breaks the responseSchema",
    );
    expect(
      refusal(() =>
        resumeEntries(
          { resume: [{ interruptId: "a", status: "resolved", payload: "off-schema" }] },
          interrupts,
          validators,
        ),
      ),
    ).toBe("resume[0].payload: approval breaks the responseSchema");
  });
});
