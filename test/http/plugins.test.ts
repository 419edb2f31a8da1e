/**
 * The app is a set of named Fastify plugins that declare what they need before them: every one
 * is registered under its name, and one registered without its prerequisites refuses to start
 * (naming what is missing) instead of running with hooks in the wrong order.
 */
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acpFace as acpApi } from "../../src/http/acp/index.js";
import { PLUGIN } from "../../src/http/plugins/names.js";
import { rateLimitPlugin } from "../../src/http/plugins/rate-limit.js";
import { build, type TestApp } from "../helpers/app.js";

describe("the app's plugins", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build({ settings: { metrics: { enabled: true, public: false } } });
  });
  afterAll(() => t.close());

  it("are each registered under their name", () => {
    for (const name of Object.values(PLUGIN)) {
      expect(t.app.hasPlugin(name), name).toBe(true);
    }
  });

  it("refuse to start without the plugins they depend on", async () => {
    const bare = Fastify();
    bare.register(rateLimitPlugin, { max: 10, windowSeconds: 1, openPaths: new Set<string>() });
    await expect(bare.ready()).rejects.toThrow(
      "The dependency 'acp-http-conventions' of plugin 'acp-rate-limit' is not registered",
    );
    await bare.close().catch(() => undefined);

    const routesAlone = Fastify();
    // The routes read the services from `app.deps`; present, but nothing registered before.
    routesAlone.decorate("deps", t.app.deps);
    routesAlone.register(acpApi);
    await expect(routesAlone.ready()).rejects.toThrow(/of plugin 'acp-routes' is not registered/);
    await routesAlone.close().catch(() => undefined);
  });
});
