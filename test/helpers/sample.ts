/**
 * The server as `npm start` runs it: config/sample.yaml, one server. The sample's remote AG-UI
 * agent points at this same server's AG-UI face (127.0.0.1:8000); here at the port the server
 * is about to listen on, so that it is still one server talking to itself.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { type BuildOptions, build, type TestApp } from "./app.js";

const configDir = resolve(import.meta.dirname, "../../config");
const sample = readFileSync(resolve(configDir, "sample.yaml"), "utf8");

/** A port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => done(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** The sample config served by one listening server; `base` is its URL. */
export async function sampleServer(
  options: Omit<BuildOptions, "yaml" | "baseDir"> = {},
): Promise<{ t: TestApp; base: string }> {
  const port = await freePort();
  const t = await build({
    ...options,
    yaml: sample.replaceAll("127.0.0.1:8000", `127.0.0.1:${port}`),
    baseDir: configDir,
  });
  await t.app.listen({ port, host: "127.0.0.1" });
  return { t, base: `http://127.0.0.1:${port}` };
}
