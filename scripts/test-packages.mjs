// Installs the packages of the folders whose tests bring their own (the CopilotKit browser
// test's React page), so that `npm install && npm test` is enough in a fresh clone. Does nothing
// when they are installed from the current lock file (as .ci/run installs them first).
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const folders = ["test/browser-copilotkit", "test/browser-langgraph"];

for (const folder of folders) {
  const dir = join(root, folder);
  const lock = join(dir, "package-lock.json");
  // npm writes this file at the end of every install in that folder.
  const installed = join(dir, "node_modules", ".package-lock.json");
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(lock).mtimeMs) continue;
  process.stdout.write(`test-packages: installing the packages of ${folder}\n`);
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const result = spawnSync(npm, ["ci", "--prefix", dir, "--no-audit", "--no-fund"], {
    stdio: "inherit",
  });
  if (result.status !== 0) {
    process.stderr.write(`test-packages: npm ci in ${folder} failed\n`);
    process.exit(result.status ?? 1);
  }
}
