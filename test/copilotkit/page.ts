/**
 * The CopilotKit chat page of the browser test: test/browser-copilotkit/page (React,
 * @copilotkit/react-core and @copilotkit/react-ui from that folder's own packages), built and
 * served as every browser test's page is (helpers/browser-page.ts).
 */
import { resolve } from "node:path";
import {
  requireBrowserParts as requireParts,
  serveChatPage as servePage,
} from "../helpers/browser-page.js";

export { type Browser, type ChatPage, launchChromium } from "../helpers/browser-page.js";

const folder = resolve(import.meta.dirname, "../browser-copilotkit");

/** Fails loudly (never skips) when what the browser test needs is not installed. */
export function requireBrowserParts(): void {
  requireParts("CopilotKit browser test", folder, "@copilotkit/react-ui");
}

export function serveChatPage() {
  return servePage(folder);
}
