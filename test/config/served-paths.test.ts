import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { build } from "../helpers/app.js";
import { configError } from "./helpers.js";

/** A config file with `server` as given (YAML lines under `server:`) and one echo agent. */
const withServer = (server: string) =>
  parseConfig(
    `server:\n${server}agents:\n  - name: echo\n    version: 1.0.0\n    description: Echoes.\n    adapter: { type: echo }\n`,
    { filename: "test.yaml", baseDir: "/nowhere" },
  );

describe("each face and the inspector at a path of its own", () => {
  it("refuses a face at another face's path, at the line that moved it", async () => {
    const err = await configError(() => withServer("  copilotkit: { basePath: /a2a }\n"));
    expect(err.message).toBe(
      "test.yaml:2:27: server.copilotkit.basePath is also server.a2a.basePath (/a2a): each face and the inspector need a path of their own",
    );
  });

  it("refuses the AG-UI face at A2A's path (it would fail to start with a duplicated route)", async () => {
    const err = await configError(() => withServer("  agui: { basePath: /a2a }\n"));
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0]).toMatchObject({
      path: ["server", "agui", "basePath"],
      message:
        "is also server.a2a.basePath (/a2a): each face and the inspector need a path of their own",
      position: { line: 2 },
    });
  });

  it("refuses one face under another, whichever of the two is written", async () => {
    const under = await configError(() =>
      withServer("  agui: { basePath: /api }\n  a2a: { basePath: /api/a2a }\n"),
    );
    expect(under.issues.map((issue) => [issue.path.join("."), issue.message])).toEqual([
      [
        "server.a2a.basePath",
        "is under server.agui.basePath (/api): each face and the inspector need a path of their own",
      ],
    ]);
    const contains = await configError(() => withServer("  agui: { basePath: /copilotkit/x }\n"));
    expect(contains.issues.map((issue) => [issue.path.join("."), issue.message])).toEqual([
      [
        "server.agui.basePath",
        "is under server.copilotkit.basePath (/copilotkit): each face and the inspector need a path of their own",
      ],
    ]);
  });

  it("refuses the inspector at a face's path", async () => {
    const err = await configError(() => withServer("  inspector: { path: /copilotkit }\n"));
    expect(err.issues.map((issue) => [issue.path.join("."), issue.message])).toEqual([
      [
        "server.inspector.path",
        "is also server.copilotkit.basePath (/copilotkit): each face and the inspector need a path of their own",
      ],
    ]);
  });

  it("lets a face take the path of one that is off, and then serves it there", async () => {
    const config = await withServer(
      "  a2a: { enabled: false }\n  copilotkit: { basePath: /a2a }\n  inspector: { enabled: false, path: /copilotkit }\n",
    );
    expect(config.server?.copilotkit).toEqual({ enabled: true, basePath: "/a2a" });
    const t = await build({
      settings: { a2a: config.server!.a2a, copilotkit: config.server!.copilotkit },
    });
    try {
      expect((await t.app.inject({ url: "/a2a/info" })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it("accepts paths that only share a prefix of characters, not of segments", async () => {
    const config = await withServer("  agui: { basePath: /api }\n  a2a: { basePath: /apis }\n");
    expect(config.server?.a2a.basePath).toBe("/apis");
  });
});
