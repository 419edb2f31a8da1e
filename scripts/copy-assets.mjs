// Copies the non-TypeScript files the compiled server reads at runtime into dist/.
// tsc only emits .js, so without this step a built server cannot find its SQL migrations.
// The generated validators are copied as written too (tsconfig.build.json leaves them out):
// tsc's re-emit nearly doubles them, and V8 keeps every module's source in the heap.
import { cpSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { info } from "./verbose.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** [source dir under src/, file-name filter] pairs; each lands at the same path under dist/. */
const assets = [
  ["storage/sqlite/migrations", /\.sql$/],
  ["storage/postgres/migrations", /\.sql$/],
  ["validation/generated", /\.c?js$/],
];

for (const [dir, pattern] of assets) {
  const from = join(root, "src", dir);
  const to = join(root, "dist", dir);
  if (!existsSync(from)) throw new Error(`asset directory missing: ${from}`);
  mkdirSync(to, { recursive: true });
  let copied = 0;
  for (const file of readdirSync(from)) {
    if (!pattern.test(file)) continue;
    cpSync(join(from, file), join(to, file));
    copied += 1;
  }
  info(`copy-assets: ${copied} file(s) ${join("src", dir)} → ${join("dist", dir)}`);
}

// The inspector (ui/) is built by Vite straight into dist/ui (`npm run build:ui`, run before
// this script); a build without it would serve a page saying it is not built.
const inspector = join(root, "dist", "ui");
if (!existsSync(join(inspector, "index.html"))) {
  throw new Error(
    `the inspector is not built: ${inspector}/index.html is missing (npm run build:ui)`,
  );
}
const files = readdirSync(join(inspector, "assets"));
info(`copy-assets: inspector in dist/ui (index.html and ${files.length} asset(s))`);
