import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

/** The system's Chromium (Debian's `chromium` package); Playwright's own builds cannot be fetched. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Headless Chromium on a fresh profile. Without the background-networking flags Chromium keeps
 * reaching for Google's hosts, which a closed network refuses many times a second.
 */
export async function launchChromiumContext(
  profilePrefix: string,
  options: { viewport?: { width: number; height: number } } = {},
): Promise<{ context: BrowserContext; profile: string }> {
  const profile = mkdtempSync(join(tmpdir(), profilePrefix));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    ...options,
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
  return { context, profile };
}
