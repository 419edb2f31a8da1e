import { describe, expect, it } from "vitest";
import { LazyAbortController } from "../../src/engine/run-engine/lazy-abort.js";

describe("LazyAbortController", () => {
  it("tells its listeners once, with the first reason, and not those that stopped listening", () => {
    const abort = new LazyAbortController();
    const heard: string[] = [];
    abort.onAbort(() => heard.push(`a:${String(abort.reason)}`));
    const stop = abort.onAbort(() => heard.push("b"));
    stop();
    abort.abort("first");
    abort.abort("second");
    expect(abort.aborted).toBe(true);
    expect(abort.reason).toBe("first");
    expect(heard).toEqual(["a:first"]);
    // Aborted already: a new listener is never called (check `aborted` first).
    abort.onAbort(() => heard.push("late"));
    expect(heard).toEqual(["a:first"]);
  });

  it("gives a signal that follows it, made before or after the abort", () => {
    const before = new LazyAbortController();
    const signal = before.signal;
    expect(signal.aborted).toBe(false);
    let reason: unknown;
    signal.addEventListener("abort", () => {
      reason = signal.reason;
    });
    before.abort("stop");
    expect(reason).toBe("stop");

    const after = new LazyAbortController();
    after.abort("done");
    expect(after.signal.aborted).toBe(true);
    expect(after.signal.reason).toBe("done");
  });
});
