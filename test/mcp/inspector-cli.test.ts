/**
 * The MCP Inspector's CLI (`@modelcontextprotocol/inspector-cli`) against the built server as
 * `npm start` runs it (dist/cli.js, the sample agents): it lists the tools and calls one.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BuiltServer, root, startBuiltServer } from "../inspector/server.js";

const run = promisify(execFile);
const CLI_DIR = join(root, "node_modules/@modelcontextprotocol/inspector-cli/build");

describe("the MCP Inspector CLI against the built server", () => {
  let server: BuiltServer;
  beforeAll(async () => {
    server = await startBuiltServer();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  const inspect = async (...args: string[]) => {
    const { stdout } = await run(
      process.execPath,
      [join(CLI_DIR, "index.js"), `${server.url}/mcp`, "--transport", "http", ...args],
      // The CLI looks for its package.json relative to the working directory but imports it
      // relative to its own file: run it from its build folder, where both agree.
      { timeout: 30_000, cwd: CLI_DIR },
    );
    return JSON.parse(stdout) as Record<string, unknown>;
  };

  it("lists a tool per sample agent", async () => {
    const listed = await inspect("--method", "tools/list");
    expect((listed.tools as Array<{ name: string }>).map((tool) => tool.name).sort()).toEqual([
      "approval-demo",
      "echo",
      "remote-echo",
      "scripted-demo",
      "word-count",
    ]);
  }, 40_000);

  it("calls a tool and shows the agent's answer", async () => {
    const called = await inspect(
      "--method",
      "tools/call",
      "--tool-name",
      "word-count",
      "--tool-arg",
      "message=one two three",
    );
    expect(called.content).toEqual([{ type: "text", text: "3 words (3 so far)." }]);
    expect(called.structuredContent).toEqual({ words: 3 });
  }, 40_000);
});
