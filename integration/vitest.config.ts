import { defineConfig } from "vitest/config";

// Run from the repository root: `npm run test:integration`. Each file starts real framework
// servers (LangGraph API, CopilotKit runtime) and our server as child processes, so files run
// one at a time and the timeouts leave room for their start-up on a busy machine.
export default defineConfig({
  root: import.meta.dirname,
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    fileParallelism: false,
    maxWorkers: 1,
  },
});
