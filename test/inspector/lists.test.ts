/**
 * The inspector's lists as a newcomer meets them, in Chromium against the built server: a
 * server without keys asks for none; threads show their agent and ids a user can tell apart
 * and find; a thread's next turn goes to its own agent; runs show the face they came through
 * (each face driven by its own client) and how long they executed, and a run from before
 * faces were recorded shows none.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { HttpAgent } from "@ag-ui/client";
import Database from "better-sqlite3";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { a2aClient, asTask, userMessage } from "../a2a/helpers.js";
import { copilotClient } from "../helpers/copilotkit.js";
import { type Browser, launchBrowser, screenshot } from "./browser.js";
import { type BuiltServer, startBuiltServer } from "./server.js";

const TIMEOUT = 60_000;

let server: BuiltServer;
let browser: Browser;

beforeAll(async () => {
  server = await startBuiltServer();
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function open(path = ""): Promise<Page & { errors: string[] }> {
  const page = await browser.page();
  await page.goto(`${server.url}/ui/${path}`);
  return page;
}

async function acp(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text) as Record<string, unknown>;
}

/** A thread the server names (a UUID v7, as every id it makes), with one run of `agent`. */
async function threadWith(agent: string, text: string): Promise<string> {
  const thread = (await acp("/threads", {})) as { thread_id: string };
  await acp(`/threads/${thread.thread_id}/runs/wait`, {
    agent_id: agentIdFor(agent, "1.0.0"),
    input: { messages: [{ role: "user", content: text }] },
  });
  return thread.thread_id;
}

describe("the inspector's lists", () => {
  it(
    "never asks for an API key on a server that has none",
    async () => {
      const page = await open("#/server");
      await page.locator("[data-testid=api-keys]", { hasText: "off" }).waitFor();
      await page.locator("[data-testid=no-key-needed]").waitFor();
      await expect(page.getByRole("button", { name: /API key/ }).count()).resolves.toBe(0);
      await expect(page.locator(".dialog").count()).resolves.toBe(0);
      await expect(page.content()).resolves.not.toContain("This server needs an API key");
      expect(page.errors).toEqual([]);
      await page.close();
    },
    TIMEOUT,
  );

  it(
    "lists threads with their agent and ids told apart by a prefix; a next turn goes to the thread's agent",
    async () => {
      // Made within a second: their ids share the first digits (the time they were made).
      const counting = await threadWith("word-count", "one two three");
      const echoing = await threadWith("echo", "hello");
      expect(counting.slice(0, 4)).toBe(echoing.slice(0, 4));

      const page = await open("#/threads");
      const row = (id: string) => page.locator(`tr[data-thread="${id}"]`);
      await row(echoing).locator(".c-agent", { hasText: "echo" }).waitFor();
      await row(counting).locator(".c-agent", { hasText: "word-count" }).waitFor();
      const shown = await Promise.all(
        [counting, echoing].map((id) => row(id).locator("a.mono").textContent()),
      );
      // Each is how its full id starts (what the eye, the page's find and grep find), and
      // no two rows read the same.
      expect(counting.startsWith(shown[0]!)).toBe(true);
      expect(echoing.startsWith(shown[1]!)).toBe(true);
      expect(shown[0]).not.toBe(shown[1]);
      expect(shown[0]!.replaceAll("-", "").length).toBeGreaterThanOrEqual(8);
      await screenshot(page, "thread-list");

      // The word-count thread's next turn is word-count's, not the first agent of the list.
      await row(counting).click();
      await page.locator("[data-testid=thread-agent]", { hasText: "word-count" }).waitFor();
      const select = page.getByLabel("agent for the next turn");
      await expect.poll(() => select.inputValue()).toBe(agentIdFor("word-count", "1.0.0"));
      await page.getByRole("button", { name: "Next turn" }).click();
      await page.getByRole("heading", { level: 1, name: /^word-count/ }).waitFor();
      await expect(page.locator("input[name=thread-id]").inputValue()).resolves.toBe(counting);
      expect(page.errors).toEqual([]);
      await page.close();
    },
    TIMEOUT,
  );

  it(
    "lists runs with the face each came through and how long it executed",
    async () => {
      // ACP: the inspector's own form.
      const page = await open();
      await page.locator('a[data-agent="echo"]').click();
      await page.getByRole("heading", { level: 1, name: /^echo/ }).waitFor();
      await page.locator("textarea[name=message-0]").fill("over ACP");
      await page.getByRole("button", { name: "Run", exact: true }).click();
      await page.locator('.run-view[data-status="success"]').waitFor();
      await page.locator("[data-testid=run-face]", { hasText: "ACP" }).waitFor();
      const acpRun = page.url().split("/").at(-1)!;

      // AG-UI, CopilotKit and A2A: each face's own client.
      const agui = new HttpAgent({ url: `${server.url}/ag-ui/echo`, threadId: randomUUID() });
      agui.addMessage({ id: randomUUID(), role: "user", content: "over AG-UI" });
      await agui.runAgent();
      const copilot = await copilotClient(`${server.url}/copilotkit`);
      const copilotAgent = copilot.agent("echo", randomUUID());
      copilotAgent.addMessage({ id: randomUUID(), role: "user", content: "over CopilotKit" });
      await copilot.core.runAgent({ agent: copilotAgent });
      expect(copilot.errors).toEqual([]);
      const a2a = await a2aClient(server.url, "echo", "JSONRPC");
      const task = asTask(await a2a.sendMessage({ message: userMessage("over A2A") } as never));

      await page.getByRole("link", { name: "Runs" }).click();
      const table = page.locator("[data-testid=run-table]");
      await table.locator(`tr[data-run="${task.id}"] .c-face`, { hasText: "A2A" }).waitFor();
      await expect(table.locator(`tr[data-run="${acpRun}"] .c-face`).textContent()).resolves.toBe(
        "ACP",
      );
      const faces = await table.locator("tbody .c-face").allTextContents();
      expect(faces).toEqual(expect.arrayContaining(["ACP", "AG-UI", "CopilotKit", "A2A"]));
      for (const duration of await table.locator("tbody .c-duration").allTextContents()) {
        expect(duration).toMatch(/^\d+(\.\d+)? (ms|s)$/);
      }
      await screenshot(page, "runs-faces");
      expect(page.errors).toEqual([]);
      await page.close();

      // A run stored before faces were recorded (its column empty) shows none.
      await server.stop();
      const db = new Database(join(server.dir, "data.db"));
      db.prepare("UPDATE runs SET face = NULL WHERE run_id = ?").run(acpRun);
      db.close();
      server = await startBuiltServer([], {}, { dir: server.dir });
      const again = await open("#/runs");
      const older = again.locator(`[data-testid=run-table] tr[data-run="${acpRun}"]`);
      await expect(older.locator(".c-face").textContent()).resolves.toBe("—");
      await expect(
        again.locator(`[data-testid=run-table] tr[data-run="${task.id}"] .c-face`).textContent(),
      ).resolves.toBe("A2A");
      expect(again.errors).toEqual([]);
      await again.close();
    },
    TIMEOUT,
  );
});
