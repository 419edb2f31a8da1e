import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Two cores: keep worker count modest so socket and timing-sensitive tests stay stable.
    maxWorkers: 2,
    // `gc()` for the tests that force a full collection (test/webhooks/gc-timeout.test.ts).
    execArgv: ["--expose-gc"],
  },
});
