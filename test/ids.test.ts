import { validate, version } from "uuid";
import { describe, expect, it } from "vitest";
import { newId } from "../src/util/ids.js";

describe("newId", () => {
  it("makes UUID v7s that sort by creation time across milliseconds", async () => {
    const first = newId();
    await new Promise((resolve) => setTimeout(resolve, 3));
    const second = newId();
    for (const id of [first, second]) {
      expect(validate(id)).toBe(true);
      expect(version(id)).toBe(7);
      // RFC 9562 variant: 10xx in the 17th hex digit.
      expect(id[19]).toMatch(/[89ab]/);
    }
    expect(first < second).toBe(true);
    expect(Number.parseInt(first.replace("-", "").slice(0, 12), 16)).toBeLessThanOrEqual(
      Date.now(),
    );
    expect(new Set(Array.from({ length: 1000 }, newId)).size).toBe(1000);
  });
});
