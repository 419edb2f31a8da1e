import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { launchChromiumContext } from "../helpers/chromium.js";
import { root } from "./server.js";

/** Where the tests leave their screenshots (ignored by git). */
export const SCREENSHOTS = join(root, "test-results", "inspector");

export interface Browser {
  context: BrowserContext;
  /** A new tab, recording console errors and page errors (a CSP violation is one). */
  page(): Promise<Page & { errors: string[] }>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const { context, profile } = await launchChromiumContext("acp-inspector-chromium-", {
    viewport: { width: 1440, height: 900 },
  });
  return {
    context,
    async page() {
      const page = (await context.newPage()) as Page & { errors: string[] };
      page.errors = [];
      page.on("console", (message) => {
        if (message.type() === "error") page.errors.push(message.text());
      });
      page.on("pageerror", (error) => page.errors.push(error.message));
      return page;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export function screenshot(page: Page, name: string): Promise<Buffer> {
  return page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
