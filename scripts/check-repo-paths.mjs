// Fails when a source, test, benchmark, build or CI file names the `shared` folder beside the
// repository. A user's clone has nothing beside it, so whatever reads from there passes in one
// checkout and breaks in every other. Usage: node scripts/check-repo-paths.mjs [repository root]
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(process.argv[2] ?? join(fileURLToPath(import.meta.url), "../.."));

/** The folders and root files that make up what is built, tested and run. */
const FOLDERS = ["src", "test", "bench", "scripts", ".ci", "docker"];
const ROOT_FILES = ["package.json", "vitest.config.ts", "tsconfig.json", "tsconfig.build.json"];
/** Installed packages and benchmark output: not ours to check, and large. */
const SKIP_NAMES = new Set(["node_modules", ".git"]);
const SKIP_PATHS = new Set(["bench/results"]);

// Assembled from parts so that this file does not name the folder it looks for.
const PARENT = "\\.\\.";
const FOLDER = "shared";
const PATTERNS = [
  new RegExp(`${PARENT}[\\\\/]+${FOLDER}\\b`), // "<parent>/shared" or "<parent>\shared" in a path
  new RegExp(`["'\`]${PARENT}["'\`]\\s*,\\s*["'\`]${FOLDER}["'\`]`), // join("<parent>", "shared")
];

function* files(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if (error.code === "ENOENT") return;
    throw error;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (SKIP_NAMES.has(entry.name) || SKIP_PATHS.has(relative(root, path))) continue;
    if (entry.isDirectory()) yield* files(path);
    else if (entry.isFile()) yield path;
  }
}

const candidates = [
  ...FOLDERS.flatMap((folder) => [...files(join(root, folder))]),
  ...ROOT_FILES.map((file) => join(root, file)),
];

const findings = [];
for (const file of candidates) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if (error.code === "ENOENT") continue;
    throw error;
  }
  text.split("\n").forEach((line, index) => {
    if (PATTERNS.some((pattern) => pattern.test(line))) {
      findings.push(`${relative(root, file)}:${index + 1}: ${line.trim()}`);
    }
  });
}

if (findings.length > 0) {
  console.error(
    `check-repo-paths: ${findings.length} line(s) name the ${FOLDER} folder beside the repository, which a clone does not have; keep what they need inside the repository (test data in test/fixtures/):`,
  );
  for (const finding of findings) console.error(`  ${finding}`);
  process.exit(1);
}
console.log(
  `check-repo-paths: ${candidates.length} files checked, none reads beside the repository`,
);
