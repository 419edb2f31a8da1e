/**
 * `useStream` (`@langchain/langgraph-sdk/react`) in a real browser, pointed at the LangGraph
 * face: a React page (test/browser-langgraph, built by Vite, served from its own origin) driven
 * in Chromium through agent-chat-ui's flows: a conversation, a page reloaded mid-reply that
 * rejoins its run (`reconnectOnMount`) and shows the reply once, whole, and an interrupt shown
 * and answered with `submit(undefined, { command: { resume } })`.
 */
import { resolve } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import {
  type Browser,
  type ChatPage,
  launchChromium,
  requireBrowserParts,
  serveChatPage,
} from "../helpers/browser-page.js";
import { sampleServer } from "../helpers/sample.js";

const folder = resolve(import.meta.dirname, "../browser-langgraph");
/** Bounds that only keep a broken page from hanging the suite; a loaded machine may need them. */
const PAGE_TEST_MS = 180_000;

type Shown = Array<[string, string]>;

/** What the page shows: each message's LangChain type and text, in order. */
function shown(page: Page): Promise<Shown> {
  return page.$$eval("#messages li", (nodes) =>
    nodes.map((node): [string, string] => [
      node.getAttribute("data-type") ?? "",
      node.textContent?.trim() ?? "",
    ]),
  );
}

/** Polls the page until `check` holds: it is driven by a live stream, not by the test. */
async function until(page: Page, check: (messages: Shown) => boolean, what: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const messages = await shown(page);
    if (check(messages)) return messages;
    if (Date.now() > deadline) {
      const error = await page.$eval("#error", (n) => n.textContent).catch(() => null);
      throw new Error(
        `the page never showed ${what}; it shows ${JSON.stringify(messages)} (error: ${error})`,
      );
    }
    await new Promise((done) => setTimeout(done, 100));
  }
}

async function send(page: Page, text: string) {
  await page.fill("#draft", text);
  await page.click("#send");
}

describe("useStream in Chromium", () => {
  let chat: ChatPage;
  let browser: Browser;
  let t: TestApp;
  let api: string;

  beforeAll(async () => {
    requireBrowserParts("LangGraph browser test", folder, "@langchain/langgraph-sdk");
    chat = await serveChatPage(folder);
    let base: string;
    ({ t, base } = await sampleServer({ settings: { cors: { origins: [chat.origin] } } }));
    api = `${base}/langgraph`;
    browser = await launchChromium();
  }, PAGE_TEST_MS);
  afterAll(async () => {
    await browser?.close();
    await chat?.close();
    await t?.close();
  });

  const open = async (assistant: string) => {
    const page = await browser.page();
    await page.goto(`${chat.origin}/?api=${encodeURIComponent(api)}&assistant=${assistant}`);
    return page;
  };

  it(
    "holds a conversation",
    async () => {
      const page = await open("echo");
      await send(page, "hello there");
      await until(
        page,
        (m) =>
          JSON.stringify(m) ===
          JSON.stringify([
            ["human", "hello there"],
            ["ai", "hello there"],
          ]),
        "the first answer",
      );
      await page.waitForSelector("#status:text('idle')");
      await send(page, "and again");
      await until(page, (m) => m.length === 4 && m[3]![1] === "and again", "the second answer");
      expect(page.errors).toEqual([]);
    },
    PAGE_TEST_MS,
  );

  it(
    "rejoins its run after a reload mid-reply and shows the whole reply once",
    async () => {
      const page = await open("echo");
      const said = Array.from({ length: 120 }, (_, i) => `w${i}`).join(" ");
      await send(page, said);
      // Part of the reply is on the page: the run is streaming when the page goes away.
      await until(
        page,
        (m) => m.some(([type, text]) => type === "ai" && text.split(" ").length >= 10),
        "the reply starting",
      );
      const url = page.url();
      expect(url).toContain("thread=");
      const joins: string[] = [];
      page.on("request", (request) => {
        if (request.method() === "GET" && /\/runs\/[^/]+\/stream/.test(request.url())) {
          joins.push(request.url());
        }
      });
      await page.reload();
      await until(
        page,
        (m) =>
          JSON.stringify(m) ===
          JSON.stringify([
            ["human", said],
            ["ai", said],
          ]),
        "the question and the whole reply, once, after the reload",
      );
      // The reloaded page rejoined the run's stream (rather than reading the thread at its end).
      expect(joins.length).toBeGreaterThanOrEqual(1);
      await page.waitForSelector("#status:text('idle')");
      expect(page.errors).toEqual([]);
    },
    PAGE_TEST_MS,
  );

  it(
    "shows an interrupt and answers it with command.resume",
    async () => {
      const page = await open("approval-demo");
      await send(page, "migrate the database");
      await page.waitForSelector("#interrupt-message:text('Approve the plan?')", {
        timeout: 60_000,
      });
      await until(page, (m) => m.at(-1)?.[1].startsWith("Plan:") === true, "the plan");
      await page.click("#approve");
      await until(
        page,
        (m) => m.at(-1)?.[1] === "Approved. Backed up and migrated.",
        "the answer after the approval",
      );
      await page.waitForSelector("#interrupt", { state: "detached", timeout: 60_000 });
      expect(page.errors).toEqual([]);
    },
    PAGE_TEST_MS,
  );
});
