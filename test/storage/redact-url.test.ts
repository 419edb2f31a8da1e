import { describe, expect, it } from "vitest";
import { createStorage } from "../../src/storage/index.js";
import { redactStorageUrl } from "../../src/storage/redact-url.js";

describe("redactStorageUrl", () => {
  it("hides the password of user:password@ and of a password= parameter", () => {
    expect(redactStorageUrl("postgres://acp:acp@postgres:5432/acp")).toBe(
      "postgres://acp:***@postgres:5432/acp",
    );
    expect(redactStorageUrl("postgresql://u:p%40ss@db/x?sslmode=require")).toBe(
      "postgresql://u:***@db/x?sslmode=require",
    );
    // An unencoded "@" in the password: everything up to the host's "@" is hidden.
    expect(redactStorageUrl("postgres://u:p@ss@db/x")).toBe("postgres://u:***@db/x");
    expect(redactStorageUrl("postgres://db/x?user=u&password=secret&schema=s")).toBe(
      "postgres://db/x?user=u&password=***&schema=s",
    );
  });

  it("leaves URLs and paths without a password as they are", () => {
    for (const url of ["postgres://u@db/x", "postgres://db:5432/x", "./data/acp.db", ":memory:"]) {
      expect(redactStorageUrl(url)).toBe(url);
    }
  });

  it("keeps the password out of the error for an unsupported scheme", () => {
    expect(() => createStorage("mysql://root:hunter2@db/x")).toThrow(
      "unsupported storage URL scheme in mysql://root:***@db/x",
    );
  });
});
