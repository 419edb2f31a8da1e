import { afterEach, describe, expect, it } from "vitest";
import { killAll, startCli, workspace } from "../crash/cli.js";

afterEach(killAll);

const KEY = "env-provided-key-0123456789";

describe("acp-agui serve with ACP_AGUI_API_KEYS", () => {
  it("requires one of the keys from the environment, keeps probes open and never logs the key", async () => {
    const cli = startCli(
      ["serve", "--config", "config/sample.yaml", "--port", "0", "--db", ":memory:"],
      {
        ACP_AGUI_API_KEYS: ` ${KEY} , another-key-0123456789abc`,
      },
    );
    const base = await cli.listening;
    const search = (headers: Record<string, string>) =>
      fetch(`${base}/agents/search`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: "{}",
      });
    const refused = await search({});
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toBe("Bearer");
    expect(await refused.json()).toBe("missing or invalid API key");
    expect((await search({ authorization: `Bearer ${KEY}` })).status).toBe(200);
    expect((await search({ "x-api-key": "another-key-0123456789abc" })).status).toBe(200);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
    const everything = JSON.stringify(cli.logs()) + cli.stderr();
    expect(everything).not.toContain(KEY);
    expect(cli.logs().some((line) => typeof line.request_id === "string")).toBe(true);
  });

  it("refuses to start with a key shorter than 16 characters", async () => {
    const cli = startCli(["serve", "--config", "config/sample.yaml", "--db", ":memory:"], {
      ACP_AGUI_API_KEYS: "short",
    });
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toContain("ACP_AGUI_API_KEYS: key 1 is shorter than 16 characters");
    expect(cli.stderr()).not.toContain("short,");
  });
});

describe("acp-agui serve with server.logLevel in the config", () => {
  const config = {
    server: { logLevel: "debug" },
    agents: [
      {
        name: "echo",
        version: "1.0.0",
        description: "echo",
        adapter: { type: "echo", delayMs: 0 },
      },
    ],
  };
  const oneRun = async (base: string) => {
    const search = await fetch(`${base}/agents/search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    const agents = (await search.json()) as Array<{ agent_id: string }>;
    const wait = await fetch(`${base}/runs/wait`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        agent_id: agents[0]?.agent_id,
        input: { messages: [{ role: "user", content: "hi" }] },
      }),
    });
    expect(wait.status).toBe(200);
  };

  it("logs at the file's level when no flag or environment variable names one", async () => {
    const { configPath } = workspace(config);
    const cli = startCli(["serve", "--config", configPath, "--port", "0", "--db", ":memory:"], {
      LOG_LEVEL: "",
    });
    await oneRun(await cli.listening);
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
    expect(cli.logs().some((line) => line.msg === "segment started")).toBe(true);
  });

  it("lets LOG_LEVEL beat the file's level", async () => {
    const { configPath } = workspace(config);
    const cli = startCli(["serve", "--config", configPath, "--port", "0", "--db", ":memory:"], {
      LOG_LEVEL: "info",
    });
    await oneRun(await cli.listening);
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
    expect(cli.logs().some((line) => line.msg === "segment started")).toBe(false);
  });
});
