import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join, relative, resolve, sep } from "node:path";
import { gzipSync } from "node:zlib";
import { packageRoot } from "../../util/paths.js";

/** Where `npm run build` puts the inspector's files (Vite's output, see ui/vite.config.ts). */
export const DEFAULT_INSPECTOR_ROOT = resolve(packageRoot, "dist", "ui");

/** One built file, held in memory: the inspector is a few small files, read once at start. */
export interface InspectorAsset {
  body: Buffer;
  /** The same bytes gzipped, when that is worth it (clients that accept gzip get these). */
  gzipped?: Buffer;
  contentType: string;
  etag: string;
  /** Content-hashed names (Vite's `assets/` folder) never change: browsers may keep them. */
  immutable: boolean;
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
};

/** Smaller files gain nothing from compression. */
const GZIP_MIN_BYTES = 1024;

/**
 * Reads the built inspector: every file under `root`, keyed by its path relative to it
 * (`index.html`, `assets/index-3f2a.js`). `undefined` when it was never built (no index.html),
 * so the server can say so instead of serving nothing. Only these files are ever served: a
 * request path is looked up in the map, never joined to a directory.
 */
export function loadInspectorAssets(
  root = DEFAULT_INSPECTOR_ROOT,
): Map<string, InspectorAsset> | undefined {
  if (!existsSync(join(root, "index.html"))) return undefined;
  const assets = new Map<string, InspectorAsset>();
  for (const file of listFiles(root)) {
    const name = relative(root, file).split(sep).join("/");
    const contentType = CONTENT_TYPES[extname(file).toLowerCase()];
    // Source maps and stray files stay out: only what a browser needs, with a known type.
    if (!contentType) continue;
    const body = readFileSync(file);
    const gzipped = body.length >= GZIP_MIN_BYTES ? gzipSync(body, { level: 9 }) : undefined;
    assets.set(name, {
      body,
      gzipped: gzipped && gzipped.length < body.length ? gzipped : undefined,
      contentType,
      etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`,
      immutable: name.startsWith("assets/"),
    });
  }
  return assets;
}

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...listFiles(path));
    else out.push(path);
  }
  return out;
}
