import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, launchBrowser, screenshot } from "./browser.js";
import { type BuiltServer, startBuiltServer } from "./server.js";

/** 10,000 AG-UI events in one run: a reply streamed one word at a time. */
const WORDS = 9_996;
const manyEvents = {
  name: "many-events",
  version: "1.0.0",
  description: "Streams a reply of 10,000 AG-UI events as fast as it can.",
  adapter: {
    type: "scripted",
    script: [
      { type: "RUN_STARTED", threadId: "t", runId: "r" },
      { type: "TEXT_MESSAGE_START", messageId: "long", role: "assistant" },
      ...Array.from({ length: WORDS }, (_, i) => ({
        type: "TEXT_MESSAGE_CONTENT",
        messageId: "long",
        delta: `w${i} `,
      })),
      { type: "TEXT_MESSAGE_END", messageId: "long" },
      { type: "RUN_FINISHED", threadId: "t", runId: "r" },
    ],
  },
};

/** One run with every kind of message: reasoning, an activity, a subagent, a tool call. */
const showcase = {
  name: "showcase",
  version: "1.0.0",
  description: "Reasons, reports an activity, asks a subagent, calls a tool.",
  adapter: {
    type: "scripted",
    script: [
      { type: "RUN_STARTED", threadId: "t", runId: "r" },
      { type: "REASONING_START", messageId: "r1" },
      { type: "REASONING_MESSAGE_START", messageId: "r1", role: "reasoning" },
      { type: "REASONING_MESSAGE_CONTENT", messageId: "r1", delta: "Ask a researcher first." },
      { type: "REASONING_MESSAGE_END", messageId: "r1" },
      { type: "REASONING_END", messageId: "r1" },
      {
        type: "ACTIVITY_SNAPSHOT",
        messageId: "act-1",
        activityType: "search",
        content: { query: "weather Lisbon", results: 3 },
      },
      { type: "SUBAGENT_STARTED", subagentRunId: "sub-1", name: "researcher" },
      { type: "TEXT_MESSAGE_START", messageId: "s1", role: "assistant", subagentRunId: "sub-1" },
      {
        type: "TEXT_MESSAGE_CONTENT",
        messageId: "s1",
        delta: "Found 3 forecasts.",
        subagentRunId: "sub-1",
      },
      { type: "TEXT_MESSAGE_END", messageId: "s1", subagentRunId: "sub-1" },
      { type: "SUBAGENT_FINISHED", subagentRunId: "sub-1" },
      { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Checking the forecast." },
      { type: "TEXT_MESSAGE_END", messageId: "m1" },
      {
        type: "TOOL_CALL_START",
        toolCallId: "call-1",
        toolCallName: "get_weather",
        parentMessageId: "m1",
      },
      { type: "TOOL_CALL_ARGS", toolCallId: "call-1", delta: '{"city":"Lisbon"}' },
      { type: "TOOL_CALL_END", toolCallId: "call-1" },
      {
        type: "TOOL_CALL_RESULT",
        messageId: "t1",
        toolCallId: "call-1",
        content: '{"sky":"clear","temperature":21}',
      },
      { type: "RUN_FINISHED", threadId: "t", runId: "r" },
    ],
  },
};

const DEMO_AGENTS = ["echo", "scripted-demo", "approval-demo", "word-count", "remote-echo"];
const TIMEOUT = 60_000;

let server: BuiltServer;
let browser: Browser;

beforeAll(async () => {
  server = await startBuiltServer([manyEvents, showcase]);
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

/** Opens an agent's page from the list, as a user would. */
async function openAgent(page: Page, name: string): Promise<void> {
  await page.locator(`a[data-agent="${name}"]`).click();
  await page.getByRole("heading", { level: 1, name: new RegExp(`^${name}`) }).waitFor();
}

async function runWith(page: Page, message?: string): Promise<void> {
  if (message !== undefined) await page.locator("textarea[name=message-0]").fill(message);
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await page.locator(".run-view").waitFor();
}

/** How many frames the server stored for the run the page shows. */
async function storedFrames(page: Page): Promise<number> {
  const runId = page.url().split("/").at(-1)!;
  const run = await fetch(`${server.url}/ui/api/runs/${runId}/frames?after_seq=0&limit=1`);
  return ((await run.json()) as { run: { last_seq: number } }).run.last_seq;
}

const status = (page: Page, value: string) =>
  page.locator(`.run-view[data-status="${value}"]`).waitFor({ timeout: 20_000 });

describe("the inspector in a browser", () => {
  it(
    "lists every demo agent with its descriptor, schemas and protocol faces",
    async () => {
      const page = await open();
      for (const name of DEMO_AGENTS) {
        await expect(page.locator(`a[data-agent="${name}"]`).textContent()).resolves.toContain(
          name,
        );
      }
      await openAgent(page, "approval-demo");
      await page.getByRole("tab", { name: /Interrupts/ }).click();
      await page.getByText("What a resume must send").waitFor();
      await expect(page.locator(".schema-name", { hasText: "approved" }).count()).resolves.toBe(1);
      await page.getByRole("tab", { name: "Protocols" }).click();
      await page.getByText(`${server.url}/ag-ui/approval-demo`, { exact: true }).waitFor();
      await page.locator(".json-key", { hasText: "humanInTheLoop" }).waitFor();
      await screenshot(page, "agents");
      expect(page.errors).toEqual([]);
      await page.close();
    },
    TIMEOUT,
  );

  it(
    "starts an echo run and shows the reply streaming in, event by event",
    async () => {
      const page = await open();
      await openAgent(page, "echo");
      const words = Array.from({ length: 120 }, (_, i) => `word${i}`).join(" ");
      await runWith(page, `hello inspector ${words}`);
      // Live: the first words are in before the run ends (120 words at 20 ms each).
      await page.locator(".run-view[data-connection=live]").waitFor();
      await page.locator('.trow[data-type="TEXT_MESSAGE_CONTENT"]').first().waitFor();
      await status(page, "success");
      const reply = page.locator('[data-testid=conversation] [data-role="assistant"]');
      await expect(reply.textContent()).resolves.toContain(`hello inspector ${words}`);
      await expect(
        page.locator('.trow[data-type="TEXT_MESSAGE_CONTENT"]').count(),
      ).resolves.toBeGreaterThan(10);
      await page.locator('.trow[data-type="RUN_FINISHED"]').click();
      await page.locator("[data-testid=frame-detail]").getByText("event: agent_event").waitFor();
      await page.getByRole("tab", { name: /State/ }).click();
      await page
        .locator("[data-testid=state-view]")
        .getByText('"hello inspector')
        .first()
        .waitFor();
      await screenshot(page, "echo-run");

      // The finished run read back from storage in a fresh tab, then replayed.
      const again = await browser.page();
      await again.goto(page.url());
      await status(again, "success");
      await again.getByRole("button", { name: "Replay", exact: true }).click();
      await again.getByRole("button", { name: "Stop replay" }).waitFor();
      await again.getByRole("button", { name: "Replay", exact: true }).waitFor();
      await expect(again.locator("[data-testid=event-count]").textContent()).resolves.toBe(
        await page.locator("[data-testid=event-count]").textContent(),
      );
      expect([...page.errors, ...again.errors]).toEqual([]);
      await Promise.all([page.close(), again.close()]);
    },
    TIMEOUT,
  );

  it(
    "resumes the approval demo's interrupt from the form built from its resume schema",
    async () => {
      const page = await open();
      await openAgent(page, "approval-demo");
      await runWith(page);
      await status(page, "interrupted");
      await page.locator("[data-testid=interrupt-panel]").waitFor();
      await screenshot(page, "approval-interrupt");
      // Answered from a second tab that opens the run by its address alone (nothing cached):
      // its form comes from the descriptor's resume schema, and the first tab follows too.
      const other = await browser.page();
      await other.goto(page.url());
      const panel = other.locator("[data-testid=interrupt-panel]");
      await panel.getByRole("heading", { name: /Approve the plan\?/ }).waitFor();
      await panel.getByText("Approve", { exact: true }).click();
      await panel.locator('textarea[name="approval.comment"]').fill("looks right");
      await panel.getByRole("button", { name: "Resume", exact: true }).click();
      await status(other, "success");
      await expect(other.locator('.trow[data-type="RUN_STARTED"]').count()).resolves.toBe(2);
      expect(other.errors).toEqual([]);
      await other.close();
      await status(page, "success");
      await page
        .locator('[data-testid=conversation] [data-role="assistant"]', { hasText: "Approved." })
        .waitFor();
      // The timeline continued: a second AG-UI run (segment) after the interrupt.
      await expect(page.locator('.trow[data-type="RUN_STARTED"]').count()).resolves.toBe(2);
      await expect(page.locator('.trow[data-type="STATE_DELTA"]').count()).resolves.toBe(1);
      await screenshot(page, "approval-resumed");
      expect(page.errors).toEqual([]);
      await page.close();
    },
    TIMEOUT,
  );

  it(
    "cancels a slow run while it streams",
    async () => {
      const page = await open();
      await openAgent(page, "echo");
      const long = Array.from({ length: 400 }, (_, i) => `slow${i}`).join(" ");
      await runWith(page, long);
      await page.locator('.trow[data-type="TEXT_MESSAGE_CONTENT"]').first().waitFor();
      await page.getByRole("button", { name: "Cancel", exact: true }).click();
      await page.locator('.run-view[data-outcome="cancelled"]').waitFor({ timeout: 20_000 });
      await page.getByText("(errcode 499)").waitFor();
      await expect(
        page.locator('.trow[data-type="TEXT_MESSAGE_CONTENT"]').count(),
      ).resolves.toBeLessThan(400);
      await screenshot(page, "cancelled");

      // Cancel and roll back: the run is deleted and the thread restored.
      await page.getByRole("link", { name: "Agents" }).click();
      await openAgent(page, "echo");
      await runWith(page, long);
      await page.locator('.trow[data-type="TEXT_MESSAGE_CONTENT"]').first().waitFor();
      await page.getByRole("button", { name: "Cancel & roll back" }).click();
      await page.getByText("Rolled back: the run was deleted").waitFor();
      await page.locator(".crumbs a").click();
      await page.getByRole("tab", { name: /Runs/ }).click();
      await page.getByText("No runs on this thread yet.").waitFor();
      expect(page.errors).toEqual([]);
      await page.close();
    },
    TIMEOUT,
  );

  it(
    "browses a thread's history and sees the state at an earlier checkpoint",
    async () => {
      const page = await open();
      await openAgent(page, "word-count");
      await runWith(page, "one two three");
      await status(page, "success");
      // The next turn on the same thread, from the thread's page.
      await page.locator(".crumbs a").click();
      await page.getByRole("button", { name: "Next turn" }).waitFor();
      await page.getByLabel("agent for the next turn").selectOption({ label: "word-count" });
      await page.getByRole("button", { name: "Next turn" }).click();
      await page.locator("input[name=thread-id]").waitFor();
      await runWith(page, "four five");
      await status(page, "success");
      await page
        .locator('[data-testid=conversation] [data-role="assistant"]', { hasText: "(5 so far)" })
        .waitFor();

      await page.locator(".crumbs a").click();
      await page.getByRole("tab", { name: /History/ }).click();
      const items = page.locator("[data-testid=history-list] .history-item");
      await items.nth(1).waitFor();
      await expect(items.count()).resolves.toBeGreaterThanOrEqual(2);
      const state = page.locator("[data-testid=checkpoint-state]");
      await state.getByText("total_words").first().waitFor();
      await expect(state.textContent()).resolves.toContain("5");
      await items.last().click();
      await expect(state.textContent()).resolves.not.toContain("(5 so far)");
      await state.getByText("3").first().waitFor();
      await screenshot(page, "thread-history");

      await page.getByRole("tab", { name: /Runs/ }).click();
      await page.locator(".table tbody tr").nth(1).waitFor();
      await expect(page.locator(".table tbody tr").count()).resolves.toBe(2);

      // Copy the thread (a new thread with the same history), then delete the copy.
      const original = page.url();
      await page.getByRole("button", { name: "Copy", exact: true }).click();
      await page.waitForURL((url) => url.toString() !== original);
      await page.getByRole("tab", { name: "Messages (4)" }).waitFor();
      page.once("dialog", (dialog) => void dialog.accept());
      await page.getByRole("button", { name: "Delete", exact: true }).click();
      await page.getByRole("heading", { name: "Threads" }).waitFor();
      expect(page.errors).toEqual([]);
      await page.close();
    },
    TIMEOUT,
  );

  it(
    "renders reasoning, activities, a subagent's lane and tool calls with their results",
    async () => {
      const page = await open();
      await openAgent(page, "showcase");
      await runWith(page);
      await status(page, "success");
      const conversation = page.locator("[data-testid=conversation]");
      await conversation.getByText("reasoning (23 characters)").click();
      await conversation.getByText("Ask a researcher first.").waitFor();
      await conversation.locator('[data-role="activity"]').getByText('"weather Lisbon"').waitFor();
      await conversation.locator(".tag.lane", { hasText: "researcher" }).waitFor();
      const call = conversation.locator('.tool-call[data-tool="get_weather"]');
      await call.getByText('"Lisbon"').waitFor();
      await call.getByText('"clear"').waitFor();
      // The subagent's events sit in its own lane of the timeline.
      const lane = page.locator('.trow.mode-subagent[data-type="TEXT_MESSAGE_CONTENT"] .c-lane');
      await expect(lane.textContent()).resolves.toBe("researcher");
      await screenshot(page, "showcase");
      expect(page.errors).toEqual([]);
      await page.close();
    },
    TIMEOUT,
  );

  it(
    "renders a 10,000-event run without keeping 10,000 rows in the page",
    async () => {
      const page = await open();
      await openAgent(page, "many-events");
      await runWith(page, "go");
      await status(page, "success");
      await page.getByText("10000 AG-UI events").waitFor({ timeout: 30_000 });
      // The stream closed and the frames it skipped were read back from storage, in pages.
      await page.locator(".run-view[data-connection=ended]").waitFor({ timeout: 30_000 });
      await expect(page.locator(".facts").textContent()).resolves.toContain(
        `frames${await storedFrames(page)}`,
      );
      const rows = await page.locator(".trow").count();
      expect(rows).toBeGreaterThan(0);
      expect(rows).toBeLessThan(200);
      // Scroll to the top and pick the first event: the list stays usable.
      await page.locator(".vlist").evaluate((list) => {
        list.scrollTop = 0;
        list.dispatchEvent(new Event("scroll"));
      });
      await page.locator('.trow[data-type="RUN_STARTED"]').click();
      await page.locator("[data-testid=frame-detail]").getByText("RUN_STARTED").first().waitFor();
      await page.getByRole("tab", { name: /Conversation/ }).click();
      await page
        .locator('[data-role="assistant"]')
        .getByText(`w${WORDS - 1}`)
        .waitFor();
      await screenshot(page, "ten-thousand-events");
      expect(page.errors).toEqual([]);
      await page.close();
    },
    TIMEOUT,
  );

  it(
    "shows the server's health and each agent's runs from the metrics",
    async () => {
      const page = await open("#/server");
      await page.locator("[data-testid=healthz]", { hasText: "ok" }).waitFor();
      await page.locator("[data-testid=readyz]", { hasText: "ready" }).waitFor();
      const echo = page.locator('[data-testid=agent-metrics] tr[data-agent="echo"]');
      await echo.waitFor();
      // Three echo runs so far: one finished, one cancelled, one rolled back.
      await expect(echo.locator("td").nth(3).textContent()).resolves.toBe("3");
      await screenshot(page, "server");

      // Recent runs of every kind, filtered by status: the cancelled echo run, and no error.
      await page.getByRole("link", { name: "Runs" }).click();
      await page.locator(".table tbody tr").first().waitFor();
      await page.getByLabel("status").selectOption("cancelled");
      await page
        .locator(".table tbody tr")
        .first()
        .locator(".badge", { hasText: "cancelled" })
        .waitFor();
      const badges = await page.locator(".table tbody .badge").allTextContents();
      expect(badges).toEqual(["cancelled"]);
      await page.getByLabel("status").selectOption("error");
      await page.getByText("No runs match.").waitFor();
      expect(page.errors).toEqual([]);
      await page.close();
    },
    TIMEOUT,
  );
});

describe("the inspector on a server with API keys", () => {
  it(
    "asks for the key, then sends it with every call",
    async () => {
      const key = "inspector-browser-key-0123456789";
      const secured = await startBuiltServer([], { ACP_AGUI_API_KEYS: key });
      try {
        const page = await browser.page();
        await page.goto(`${secured.url}/ui/`);
        const dialog = page.locator(".dialog");
        await dialog.getByText("This server needs an API key").waitFor();
        await dialog.locator("input[name=api-key]").fill(key);
        await dialog.getByRole("button", { name: "Use this key" }).click();
        await page.locator('a[data-agent="echo"]').waitFor();
        await openAgent(page, "echo");
        await page.getByLabel("stateless").check();
        await page.locator("textarea[name=message-0]").fill("with a key");
        await runWith(page);
        await status(page, "success");
        await expect(page.locator(".run-view .muted.mono").textContent()).resolves.toContain(
          "stateless",
        );
        await page.getByRole("tab", { name: "Request" }).click();
        await page.getByText("$ACP_API_KEY").first().waitFor();
        await expect(page.content()).resolves.not.toContain(key);
        await page.close();
      } finally {
        await secured.stop();
      }
    },
    TIMEOUT,
  );
});
