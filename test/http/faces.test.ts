import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { build, type TestApp } from "../helpers/app.js";

/** One request a face answers when it is on: [method, url, body]. */
const FACE_REQUESTS = {
  acp: ["POST", "/agents/search", {}],
  agui: ["GET", "/ag-ui/echo/capabilities", undefined],
  copilotkit: ["GET", "/copilotkit/info", undefined],
  a2a: ["GET", "/a2a/echo/.well-known/agent-card.json", undefined],
} as const;

describe("each face switched by its settings section", () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  async function status(app: TestApp, face: keyof typeof FACE_REQUESTS): Promise<number> {
    const [method, url, body] = FACE_REQUESTS[face];
    const res = await app.app.inject({ method, url, ...(body ? { payload: body } : {}) });
    return res.statusCode;
  }

  it("every face answers by default", async () => {
    t = await build();
    for (const face of Object.keys(FACE_REQUESTS) as (keyof typeof FACE_REQUESTS)[]) {
      expect(await status(t, face), face).toBe(200);
    }
  });

  for (const face of Object.keys(FACE_REQUESTS) as (keyof typeof FACE_REQUESTS)[]) {
    it(`${face}.enabled: false › that face's routes are gone, the others and the probes stay`, async () => {
      t = await build({ settings: { [face]: { ...DEFAULT_SETTINGS[face], enabled: false } } });
      expect(await status(t, face)).toBe(404);
      for (const other of Object.keys(FACE_REQUESTS) as (keyof typeof FACE_REQUESTS)[]) {
        if (other !== face) expect(await status(t, other), other).toBe(200);
      }
      expect((await t.app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
      expect((await t.app.inject({ method: "GET", url: "/openapi.json" })).statusCode).toBe(200);
    });
  }
});
