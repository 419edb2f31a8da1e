import { describe, expect, it } from "vitest";
import { nestedDeeperThan, SseDecoder, StreamFault } from "../../src/adapters/agui-http-decode.js";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("the SSE decoder's depth check on the text", () => {
  it("counts objects and arrays, not brackets inside strings", () => {
    const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    expect(nestedDeeperThan(deep(10), 10)).toBe(false);
    expect(nestedDeeperThan(deep(11), 10)).toBe(true);
    expect(nestedDeeperThan(`{"a":"${"[".repeat(50)}","b":[1]}`, 10)).toBe(false);
    expect(nestedDeeperThan(`{"a":"\\"${"{".repeat(50)}"}`, 10)).toBe(false);
    expect(nestedDeeperThan(`[${"{},".repeat(100)}{}]`, 10)).toBe(false);
  });

  it("refuses a too-deep event before parsing it, naming the limit's key", () => {
    const decoder = new SseDecoder({ maxDepth: 8, key: "server.limits.maxEventDepth" });
    const ok = decoder.push(bytes(`data: {"type":"CUSTOM","value":[[[1]]]}\n\n`));
    expect(ok).toEqual([{ type: "CUSTOM", value: [[[1]]] }]);
    const deep = `${'{"a":'.repeat(20)}1${"}".repeat(20)}`;
    expect(() => decoder.push(bytes(`data: ${deep}\n\n`))).toThrow(
      new StreamFault("sent an event nested deeper than 8 levels (server.limits.maxEventDepth)"),
    );
  });
});
