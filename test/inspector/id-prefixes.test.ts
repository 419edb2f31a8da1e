import { describe, expect, it } from "vitest";
import { newId } from "../../src/util/ids.js";
import { idPrefixes, shortId } from "../../ui/src/lib/ids.js";

describe("the ids a list shows", () => {
  it("are prefixes of at least eight digits, as long as it takes to tell them apart", () => {
    const ids = [
      "01a23f47-d31a-7c00-8000-000000000001",
      "01a23f47-d33b-7c00-8000-000000000002",
      "01a23f47-d33b-7d11-8000-000000000003",
      "01a23f99-0000-7000-8000-000000000004",
    ];
    const shown = idPrefixes(ids);
    expect([...shown.values()]).toEqual([
      "01a23f47-d31",
      "01a23f47-d33b-7c",
      "01a23f47-d33b-7d",
      "01a23f99",
    ]);
    for (const id of ids) expect(id.startsWith(shown.get(id)!)).toBe(true);
    // Alone, an id is shown to the millisecond it was made.
    expect(shortId(ids[0])).toBe("01a23f47-d31a");
    expect(idPrefixes([ids[3]!]).get(ids[3]!)).toBe("01a23f99");
  });

  it("tell apart ids the server makes in one burst, never ending on a dash", () => {
    const ids = Array.from({ length: 200 }, () => newId());
    const shown = idPrefixes(ids);
    expect(new Set(shown.values()).size).toBe(200);
    for (const [id, prefix] of shown) {
      expect(id.startsWith(prefix)).toBe(true);
      expect(prefix.endsWith("-")).toBe(false);
    }
  });
});
