/**
 * A browser test's page: a React page built with Vite from a test folder's `page/` (with that
 * folder's own packages), served by a small static server on its own origin, and opened in
 * Debian's Chromium through playwright-core. Nothing is fetched from a CDN.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import type { Page } from "playwright-core";
import { CHROMIUM, launchChromiumContext } from "./chromium.js";

/**
 * Fails loudly (never skips) when what a browser test needs is not installed: `folder`'s
 * packages (`needs` is one of them, under its node_modules) and Chromium.
 */
export function requireBrowserParts(test: string, folder: string, needs: string): void {
  if (!existsSync(join(folder, "node_modules", needs))) {
    const relative = folder.slice(folder.indexOf("test/"));
    throw new Error(`the ${test} needs its page's packages: npm ci --prefix ${relative}`);
  }
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `the ${test} needs Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`,
    );
  }
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".woff2": "font/woff2",
};

export interface ChatPage {
  /** The page's origin (to allow by CORS on the server). */
  origin: string;
  close(): Promise<void>;
}

/** Builds `folder`'s page and serves it; returns once it answers. */
export async function serveChatPage(folder: string): Promise<ChatPage> {
  const out = mkdtempSync(join(tmpdir(), "acp-browser-page-"));
  const { build } = await import("vite");
  await build({
    root: join(folder, "page"),
    base: "./",
    logLevel: "error",
    // JSX through esbuild's own React transform (no Vite React plugin needed).
    esbuild: { jsx: "automatic" },
    build: { outDir: out, emptyOutDir: true, minify: false, reportCompressedSize: false },
  });
  const server: Server = createServer(async (request, response) => {
    const path = new URL(request.url ?? "/", "http://page").pathname;
    const file = normalize(join(out, path === "/" ? "index.html" : path));
    if (!file.startsWith(out)) {
      response.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(file);
      response.writeHead(200, {
        "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    async close() {
      await new Promise((done) => server.close(done));
      rmSync(out, { recursive: true, force: true });
    },
  };
}

export interface Browser {
  /** A new tab; `errors` collects page errors (uncaught exceptions). */
  page(): Promise<Page & { errors: string[] }>;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Browser> {
  const { context, profile } = await launchChromiumContext("acp-browser-chromium-");
  return {
    async page() {
      const page = (await context.newPage()) as Page & { errors: string[] };
      page.errors = [];
      page.on("pageerror", (error) => page.errors.push(error.message));
      return page;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
