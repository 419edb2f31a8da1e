/**
 * One run's page as a newcomer meets it, in Chromium against the built server: an unknown run
 * says so and offers nothing to cancel; an approval is answered with Approve or Reject, and the
 * answer stays on the page; a clicked timeline row opens where it can be read; a run opened
 * later shows when its events came, and the tokens it used; a cancelled run is not an error.
 */
import { randomUUID } from "node:crypto";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, launchBrowser, screenshot } from "./browser.js";
import { type BuiltServer, startBuiltServer } from "./server.js";

/** A model's answer with its token usage on RUN_FINISHED, as the openai adapter reports it. */
const metered = {
  name: "metered",
  version: "1.0.0",
  description: "Answers and reports the tokens it used.",
  adapter: {
    type: "scripted",
    script: [
      { type: "RUN_STARTED", threadId: "t", runId: "r" },
      { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Forty-two." },
      { type: "TEXT_MESSAGE_END", messageId: "m1" },
      {
        type: "RUN_FINISHED",
        threadId: "t",
        runId: "r",
        usage: [
          {
            provider: "openai",
            model: "gpt-4o-mini",
            inputTokens: 1200,
            outputTokens: 34,
            totalTokens: 1234,
            cachedInputTokens: 1000,
          },
          { provider: "anthropic", model: "claude-haiku", inputTokens: 300, outputTokens: 66 },
        ],
      },
    ],
  },
};

const TIMEOUT = 60_000;

let server: BuiltServer;
let browser: Browser;

beforeAll(async () => {
  server = await startBuiltServer([metered]);
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

async function runAgent(page: Page, name: string, message?: string): Promise<void> {
  await page.locator(`a[data-agent="${name}"]`).click();
  await page.getByRole("heading", { level: 1, name: new RegExp(`^${name}`) }).waitFor();
  if (message !== undefined) await page.locator("textarea[name=message-0]").fill(message);
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await page.locator(".run-view").waitFor();
}

const outcome = (page: Page, value: string) =>
  page.locator(`.run-view[data-outcome="${value}"]`).waitFor({ timeout: 20_000 });

/** Whether the element's top is on screen, with room below it to read something. */
async function inView(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).boundingBox();
  const height = page.viewportSize()!.height;
  return box !== null && box.y >= 0 && box.y + 60 <= height;
}

describe("a run's page", () => {
  it(
    "says an unknown run does not exist, with nothing to cancel and nothing live",
    async () => {
      const page = await open(`#/runs/${randomUUID()}`);
      await page.locator("[data-testid=run-missing]").getByText("No such run").waitFor();
      await page.goto(`${server.url}/ui/#/threads/${randomUUID()}/runs/${randomUUID()}`);
      await page.reload();
      await page.locator("[data-testid=run-missing]").waitFor();
      const text = await page.locator("main").textContent();
      expect(text).not.toMatch(/pending|connection lost/);
      await expect(page.getByRole("button", { name: /Cancel/ }).count()).resolves.toBe(0);
      await expect(page.locator(".badge").count()).resolves.toBe(0);
      expect(page.errors.filter((e) => !e.includes("404"))).toEqual([]);
      await page.close();
    },
    TIMEOUT,
  );

  it(
    "answers an approval with Approve or Reject, shows the answer, and opens a clicked row in view",
    async () => {
      const page = await open();
      await runAgent(page, "approval-demo");
      await outcome(page, "interrupted");
      const panel = page.locator("[data-testid=interrupt-panel]");
      const resume = panel.getByRole("button", { name: "Resume", exact: true });
      // Nothing is chosen for the user: a required yes-or-no is theirs to give.
      await panel.getByText("still to answer: approval.approved").waitFor();
      await expect(resume.isDisabled()).resolves.toBe(true);
      await panel.getByText("Approve", { exact: true }).waitFor();
      await panel.getByText("Reject", { exact: true }).click();
      await panel.locator('textarea[name="approval.comment"]').fill("not before the backup");
      await expect(resume.isEnabled()).resolves.toBe(true);
      await resume.click();
      await outcome(page, "success");

      // What was answered stays on the run's page, read back from the server (a fresh tab too).
      const answers = page.locator("[data-testid=run-answers]");
      await answers.getByText("Approve the plan?").waitFor();
      await answers.getByText('"not before the backup"').waitFor();
      await answers.locator(".json-key", { hasText: "approved" }).waitFor();
      await expect(answers.textContent()).resolves.toContain("false");
      const other = await browser.page();
      await other.goto(page.url());
      await other.locator("[data-testid=run-answers]").getByText("Approve the plan?").waitFor();
      await other.close();

      // A row clicked in the timeline opens its detail where it can be read.
      await page.locator('.trow[data-type="TEXT_MESSAGE_CONTENT"]').first().click();
      const detail = page.locator("[data-testid=frame-detail]");
      await detail.getByText("TEXT_MESSAGE_CONTENT").first().waitFor();
      expect(await inView(page, "[data-testid=frame-detail]")).toBe(true);
      await page.locator('.trow[data-type="RUN_FINISHED"]').last().click();
      await detail.getByText(/#\d+ RUN_FINISHED/).waitFor();
      expect(await inView(page, "[data-testid=frame-detail]")).toBe(true);
      await screenshot(page, "approval-answered");
      expect(page.errors).toEqual([]);
      await page.close();
    },
    TIMEOUT,
  );

  it(
    "shows when the events of a run opened later came, and the tokens it used",
    async () => {
      const page = await open();
      await runAgent(page, "echo", Array.from({ length: 30 }, (_, i) => `w${i}`).join(" "));
      await outcome(page, "success");

      // Read back from storage in a fresh tab: the segment's start and end are timed.
      const later = await browser.page();
      await later.goto(page.url());
      await outcome(later, "success");
      await later.locator(".run-view[data-connection=ended]").waitFor();
      // The run's own events only (a long list shows the rows in view).
      await later.getByPlaceholder("filter: type or text").fill("RUN_");
      const time = (type: string) =>
        later.locator(`.trow[data-type="${type}"] .c-time`).first().textContent();
      await expect(time("RUN_STARTED")).resolves.toBe("+0.000s");
      const finished = await time("RUN_FINISHED");
      expect(finished).toMatch(/^\+\d+\.\d{3}s$/);
      // 30 words 20 ms apart: the run took over half a second.
      expect(Number(finished!.slice(1, -1))).toBeGreaterThan(0.5);
      await expect(later.locator(".run-view").textContent()).resolves.not.toContain("stored");
      await later.locator("[data-testid=run-ended]").filter({ hasNotText: "—" }).waitFor();
      await later.close();

      await page.getByRole("link", { name: "Agents" }).click();
      await runAgent(page, "metered");
      await outcome(page, "success");
      const usage = page.locator("[data-testid=run-usage]");
      await usage.getByText("1,600 (1,500 in · 100 out)").waitFor();
      await expect(usage.getAttribute("title")).resolves.toBe(
        "openai gpt-4o-mini: 1,200 in, 34 out, 1,000 cached\nanthropic claude-haiku: 300 in, 66 out",
      );
      await page
        .locator('.trow[data-type="RUN_FINISHED"] .c-sum', { hasText: "1,600 tokens" })
        .waitFor();
      expect([...page.errors]).toEqual([]);
      await page.close();
    },
    TIMEOUT,
  );

  it(
    "shows a cancelled run as cancelled, not as an error, in the run and in the list",
    async () => {
      const page = await open();
      await runAgent(page, "echo", Array.from({ length: 400 }, (_, i) => `slow${i}`).join(" "));
      await page.locator('.trow[data-type="TEXT_MESSAGE_CONTENT"]').first().waitFor();
      await page.getByRole("button", { name: "Cancel", exact: true }).click();
      await outcome(page, "cancelled");
      const badge = page.locator("h1 .badge");
      await expect(badge.textContent()).resolves.toBe("cancelled");
      await expect(badge.getAttribute("class")).resolves.not.toMatch(/\bbad\b/);
      const note = page.locator("[data-testid=run-end]");
      await note.getByText(/^Cancelled:/).waitFor();
      await expect(note.getAttribute("class")).resolves.not.toContain("error");
      const runId = page.url().split("/").at(-1)!;

      await page.getByRole("link", { name: "Runs" }).click();
      const row = page.locator(`tr[data-run="${runId}"]`);
      await expect(row.locator(".badge").textContent()).resolves.toBe("cancelled");
      await page.getByLabel("status").selectOption("error");
      await page.locator("[data-testid=run-table]").waitFor();
      await expect.poll(() => row.count()).toBe(0);
      await page.getByLabel("status").selectOption("cancelled");
      await row.waitFor();
      const badges = await page.locator("[data-testid=run-table] tbody .badge").allTextContents();
      expect(new Set(badges)).toEqual(new Set(["cancelled"]));
      expect(page.errors).toEqual([]);
      await page.close();
    },
    TIMEOUT,
  );
});
