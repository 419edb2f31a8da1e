// The release as a user gets it: `npm pack`, then in an empty folder `npm install` of the
// tarball and `npx acp-agui serve` with the sample config copied out of the installed package.
// Checks /readyz, the inspector page and its assets, a run of every local sample agent kind
// (echo, scripted, module) and `npx acp-agui --version`. Run by .ci/run after `npm run build`.
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const { name, version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const log = (line) => console.log(`check-package: ${line}`);

function fail(message) {
  console.error(`check-package: FAILED: ${message}`);
  process.exitCode = 1;
  throw new Error(message);
}

const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });

function freePort() {
  return new Promise((done) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

async function get(url) {
  const response = await fetch(url);
  if (!response.ok) fail(`GET ${url}: ${response.status}`);
  return response.text();
}

async function runWait(base, agent, text) {
  const post = (path, body) =>
    fetch(base + path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then(async (r) => (r.ok ? r.json() : fail(`POST ${path}: ${r.status} ${await r.text()}`)));
  const [found] = await post("/agents/search", { name: agent });
  if (!found) fail(`the sample config has no agent ${agent}`);
  const { run, output } = await post("/runs/wait", {
    agent_id: found.agent_id,
    input: { messages: [{ role: "user", content: text }] },
  });
  if (run.status !== "success") fail(`${agent}: run ${run.status}: ${JSON.stringify(output)}`);
  return JSON.stringify(output);
}

if (!existsSync(join(root, "dist", "cli.js"))) fail("no dist/cli.js: run `npm run build` first");
const scratch = mkdtempSync(join(tmpdir(), "acp-agui-package-"));
const folder = join(scratch, "user");
let server;
try {
  // ---- pack, and install the tarball where nothing else is
  const tarball = JSON.parse(
    run("npm", ["pack", "--json", "--pack-destination", scratch, "--loglevel=error"], root),
  )[0].filename;
  log(`packed ${tarball}`);
  cpSync(join(scratch, tarball), join(folder, tarball));
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", `./${tarball}`], folder);
  log(`installed in the empty folder ${folder}`);

  const printed = run("npx", ["--no-install", name, "--version"], folder).trim();
  if (printed !== version) fail(`npx ${name} --version printed "${printed}", not ${version}`);
  log(`npx ${name} --version: ${printed}`);

  // ---- serve the sample config, copied out of the package (with its module agent)
  cpSync(join(folder, "node_modules", name, "config"), join(folder, "config"), { recursive: true });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let output = "";
  server = spawn(
    "npx",
    ["--no-install", name, "serve", "--config", "config/sample.yaml", "--port", String(port)],
    // Its own process group: the stop below reaches npx and the server it started alike.
    {
      cwd: folder,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, LOG_LEVEL: "warn" },
    },
  );
  server.stdout.on("data", (chunk) => (output += chunk));
  server.stderr.on("data", (chunk) => (output += chunk));
  const exited = new Promise((done) => server.on("exit", done));
  let ready = false;
  for (let i = 0; i < 150 && !ready && server.exitCode === null; i++) {
    ready = await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (!ready) await new Promise((done) => setTimeout(done, 200));
  }
  if (!ready) fail(`the installed server never answered /readyz:\n${output}`);
  log(`npx ${name} serve answers /readyz on port ${port}`);

  const page = await get(`${base}/ui/`);
  if (!page.includes("acp-agui inspector")) fail("/ui/ is not the inspector page");
  // The page links its script, style and icon relative to /ui/.
  const assets = [...page.matchAll(/(?:src|href)="\.\/([^"]+)"/g)].map((m) => m[1]);
  if (assets.length === 0) fail("the inspector page links no assets");
  for (const asset of assets) await get(`${base}/ui/${asset}`);
  log(`/ui/ serves the inspector and its ${assets.length} assets`);

  for (const [agent, text] of [
    ["echo", "hello from the tarball"],
    ["scripted-demo", "weather?"],
    ["word-count", "three little words"],
  ]) {
    log(`run of ${agent}: ${(await runWait(base, agent, text)).slice(0, 100)}`);
  }

  process.kill(-server.pid, "SIGTERM");
  await exited;
  server = undefined;
  log("passed");
} finally {
  if (server && server.exitCode === null) process.kill(-server.pid, "SIGKILL");
  rmSync(scratch, { recursive: true, force: true });
}
