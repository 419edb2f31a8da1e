import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.js";

const schemas = resolve(import.meta.dirname, "../../schemas");

describe("health and the bundled documents", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });
  afterAll(() => t.close());

  it("GET /openapi.json › serves the bundled ACP document byte for byte", async () => {
    const res = await t.app.inject({ method: "GET", url: "/openapi.json" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toContain("application/json");
    expect(res.body).toBe(readFileSync(resolve(schemas, "acp.openapi.json"), "utf8"));
  });

  it("GET /schemas/ag-ui.schema.json › serves the bundled AG-UI schema that descriptors point at", async () => {
    const res = await t.app.inject({ method: "GET", url: "/schemas/ag-ui.schema.json" });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(readFileSync(resolve(schemas, "ag-ui.schema.json"), "utf8"));
  });

  it("GET /healthz and /readyz › answer while storage is open", async () => {
    expect((await t.app.inject({ method: "GET", url: "/healthz" })).json()).toBe("ok");
    const ready = await t.app.inject({ method: "GET", url: "/readyz" });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toBe("ready");
  });

  it("an unknown path › 404 with an ACP string error naming it", async () => {
    const res = await t.app.inject({ method: "GET", url: "/nowhere?x=1" });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toBe("no route for GET /nowhere");
  });
});

describe("readiness", () => {
  it("GET /readyz › 503 once storage is closed", async () => {
    const t = await build();
    await t.storage.close();
    const res = await t.app.inject({ method: "GET", url: "/readyz" });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toBe("storage is not available");
    await t.app.close();
  });
});
