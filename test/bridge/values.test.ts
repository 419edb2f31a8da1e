import { describe, expect, it } from "vitest";
import {
  asValues,
  stateForClient,
  storedValues,
  threadStateForAgent,
} from "../../src/bridge/acp/values.js";

describe("AG-UI state ⇄ ACP values", () => {
  it("wraps state that is not an object, and gives no state as {}", () => {
    expect(asValues({ n: 1 })).toEqual({ n: 1 });
    expect(asValues(undefined)).toEqual({});
    expect(asValues(null)).toEqual({ $state: null });
    expect(asValues([1])).toEqual({ $state: [1] });
    expect(asValues("s")).toEqual({ $state: "s" });
    expect(storedValues(null)).toEqual({});
    expect(storedValues({ $state: 3 })).toEqual({ $state: 3 });
  });

  it("unwraps it for the agent, falling back to the input's state, then {}", () => {
    expect(threadStateForAgent({ $state: [1] }, { i: 1 })).toEqual([1]);
    expect(threadStateForAgent({ n: 1 }, { i: 1 })).toEqual({ n: 1 });
    expect(threadStateForAgent({}, { i: 1 })).toEqual({ i: 1 });
    expect(threadStateForAgent(null, undefined)).toEqual({});
  });

  it("unwraps it for a client, with nothing to restore as undefined", () => {
    expect(stateForClient(null)).toBeUndefined();
    expect(stateForClient({})).toBeUndefined();
    expect(stateForClient({ $state: null })).toBeUndefined();
    expect(stateForClient({ $state: "s" })).toBe("s");
    expect(stateForClient({ n: 1 })).toEqual({ n: 1 });
  });
});
