import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { root } from "./server.js";

/** The system's Chromium (Debian's `chromium` package); Playwright's own builds cannot be fetched. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Where the tests leave their screenshots (ignored by git). */
export const SCREENSHOTS = join(root, "test-results", "inspector");

export interface Browser {
  context: BrowserContext;
  /** A new tab, recording console errors and page errors (a CSP violation is one). */
  page(): Promise<Page & { errors: string[] }>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "acp-inspector-chromium-"));
  mkdirSync(SCREENSHOTS, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
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
