/**
 * A CopilotKit app in a real browser: a React page with CopilotKit's provider and chat component
 * (@copilotkit/react-core and @copilotkit/react-ui, built by Vite, served from its own origin),
 * `runtimeUrl` set to this server's /copilotkit, driven in Chromium. The reply streams in; a
 * reload mid-reply shows the complete reply once; the chat's stop button stops a run and the
 * next message is answered.
 */
import { randomUUID } from "node:crypto";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aclThreadId } from "../../src/http/agui-runs/agui-runs.js";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import {
  type Browser,
  type ChatPage,
  launchChromium,
  requireBrowserParts,
  serveChatPage,
} from "./page.js";

const YAML = `
agents:
  - name: slow
    version: 1.0.0
    description: Echo that takes its time.
    adapter: { type: echo, delayMs: 80 }
`;

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

/** What the chat shows: each message's role and text, in order. */
function chatMessages(page: Page): Promise<Array<[string, string]>> {
  return page.$$eval(".copilotKitMessage", (nodes) =>
    nodes.map((node): [string, string] => [
      node.classList.contains("copilotKitUserMessage") ? "user" : "assistant",
      (node.querySelector(".copilotKitMarkdown") ?? node).textContent?.trim() ?? "",
    ]),
  );
}

/**
 * Bounds that only keep a broken page from hanging the suite (here and in `untilChat`); a
 * loaded machine may need much of them.
 */
const PAGE_TEST_MS = 180_000;

/** Polls the chat until `check` holds (the page is driven by a live stream, not by the test). */
async function untilChat(
  page: Page,
  check: (messages: Array<[string, string]>) => boolean,
  what: string,
): Promise<Array<[string, string]>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const messages = await chatMessages(page);
    if (check(messages)) return messages;
    if (Date.now() > deadline) {
      throw new Error(`the chat never showed ${what}; it shows ${JSON.stringify(messages)}`);
    }
    await page.waitForTimeout(50);
  }
}

describe("a CopilotKit chat page in Chromium, with runtimeUrl set to /copilotkit", () => {
  let chat: ChatPage;
  let browser: Browser;
  let t: TestApp;
  let runtimeUrl: string;
  beforeAll(async () => {
    requireBrowserParts();
    chat = await serveChatPage();
    // The page is on its own origin: CORS lets it call the server, as a deployed app would.
    t = await build({ yaml: YAML, settings: { cors: { origins: [chat.origin] } } });
    runtimeUrl = `${await listen(t)}/copilotkit`;
    browser = await launchChromium();
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await chat?.close();
  });

  const open = async (threadId: string) => {
    const page = await browser.page();
    const query = new URLSearchParams({ runtime: runtimeUrl, agent: "slow", thread: threadId });
    await page.goto(`${chat.origin}/?${query}`);
    await page.getByTestId("copilot-chat-textarea").waitFor();
    return page;
  };
  const send = async (page: Page, text: string) => {
    const input = page.getByTestId("copilot-chat-textarea");
    await input.fill(text);
    // The chat ignores Enter while it is busy (it connects to the thread when it mounts): press
    // it again once the chat is free, as a user would, until the chat has taken the message.
    const free = page.locator(
      '[data-testid="copilot-send-button"]:not([data-copilotkit-in-progress="true"])',
    );
    const deadline = Date.now() + 60_000;
    while ((await input.inputValue()) !== "") {
      if (Date.now() > deadline) throw new Error("the chat never took the message");
      await free.waitFor();
      await input.press("Enter");
      await page.waitForTimeout(100);
    }
  };

  it("streams the reply in, and after a reload mid-reply shows the complete reply once", {
    timeout: PAGE_TEST_MS,
  }, async () => {
    const threadId = randomUUID();
    const page = await open(threadId);
    const text = words(40);
    await send(page, text);
    // Streaming: part of the reply is on screen before all of it.
    const partial = await untilChat(
      page,
      (messages) => {
        const reply = messages[1]?.[1] ?? "";
        return reply !== "" && reply.length < text.length;
      },
      "part of the reply",
    );
    expect(partial[0]).toEqual(["user", text]);
    expect(text.startsWith(partial[1]![1])).toBe(true);

    await page.reload();
    await page.getByTestId("copilot-chat-textarea").waitFor();
    const complete = await untilChat(
      page,
      (messages) => messages.some(([role, shown]) => role === "assistant" && shown === text),
      "the complete reply",
    );
    expect(complete).toEqual([
      ["user", text],
      ["assistant", text],
    ]);
    expect(page.errors).toEqual([]);

    const thread = (await t.call("GET", `/threads/${threadId}`)).body as {
      messages: Array<{ content: unknown }>;
    };
    expect(thread.messages.map((m) => m.content)).toEqual([text, text]);
    await page.close();
  });

  it("stops a run with the chat's stop button, then answers the next message", {
    timeout: PAGE_TEST_MS,
  }, async () => {
    const threadId = randomUUID();
    const page = await open(threadId);
    const text = words(300);
    await send(page, text);
    await untilChat(page, (messages) => (messages[1]?.[1] ?? "") !== "", "the reply starting");
    await page.getByRole("button", { name: "Stop" }).click();

    const runs = async () =>
      (await t.call("GET", `/threads/${aclThreadId(threadId)}/runs`)).body as Array<{
        status: string;
      }>;
    const deadline = Date.now() + 60_000;
    while ((await runs())[0]?.status !== "error") {
      if (Date.now() > deadline) throw new Error("the run was not stopped");
      await page.waitForTimeout(50);
    }
    const stopped = (await chatMessages(page))[1]![1];
    expect(stopped.length).toBeLessThan(text.length);
    expect(text.startsWith(stopped)).toBe(true);

    await send(page, "after the stop");
    const after = await untilChat(
      page,
      (messages) => messages.at(-1)?.[1] === "after the stop" && messages.length === 4,
      "the answer to the next message",
    );
    expect(after.slice(2)).toEqual([
      ["user", "after the stop"],
      ["assistant", "after the stop"],
    ]);
    expect((await runs()).map((run) => run.status)).toEqual(["success", "error"]);
    expect(page.errors).toEqual([]);
    await page.close();
  });
});
