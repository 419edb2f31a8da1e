import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

/**
 * A server on SQLite loads none of the PostgreSQL code: the storage index imports only the
 * PostgreSQL storage's shell (its URL check), and the rest comes with `open()`. A child process
 * records every module it loads through a loader hook.
 */
const RECORD_LOADS = `data:text/javascript,${encodeURIComponent(`
import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(
  "export async function load(url, context, next) { process.stderr.write('LOADED ' + url + '\\\\n'); return next(url, context); }"
));
`)}`;

function loadedModules(script: string): string[] {
  const { status, stderr } = spawnSync(
    process.execPath,
    ["--import", RECORD_LOADS, "--import", "tsx", "--input-type=module", "-e", script],
    { encoding: "utf8", cwd: process.cwd(), timeout: 60_000 },
  );
  expect(status, stderr).toBe(0);
  return stderr
    .split("\n")
    .filter((line) => line.startsWith("LOADED "))
    .map((line) => line.slice("LOADED ".length));
}

describe("PostgreSQL code on a SQLite server", () => {
  it("is not loaded when a SQLite storage is created and opened", () => {
    const loaded = loadedModules(`
      const { createStorage } = await import("./src/storage/index.ts");
      const storage = createStorage(":memory:");
      await storage.open();
      await storage.close();
    `);
    expect(loaded.some((url) => url.endsWith("/src/storage/sqlite/sqlite-storage.ts"))).toBe(true);
    const postgres = loaded.filter((url) => url.includes("/src/storage/postgres/"));
    expect(postgres.map((url) => url.replace(/.*\/src\/storage\/postgres\//, "")).sort()).toEqual([
      "connection-target.ts",
      "postgres-storage.ts",
    ]);
    expect(loaded.filter((url) => /\/node_modules\/pg(-[a-z]+)?\//.test(url))).toEqual([]);
  });

  it("is loaded by a PostgreSQL storage's open(), not by building one", () => {
    const loaded = loadedModules(`
      const { createStorage } = await import("./src/storage/index.ts");
      const storage = createStorage("postgres://127.0.0.1:1/none?connect_timeout=1");
      process.stderr.write("LOADED built\\n");
      await storage.open().then(() => process.exit(3), () => undefined);
    `);
    const mark = loaded.indexOf("built");
    expect(mark).toBeGreaterThan(0);
    expect(loaded.slice(0, mark).some((url) => url.endsWith("/repositories.ts"))).toBe(false);
    expect(
      loaded.slice(mark).some((url) => url.endsWith("/src/storage/postgres/repositories.ts")),
    ).toBe(true);
  });
});
