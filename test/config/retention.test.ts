import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { DEFAULT_SETTINGS, mergeSettings } from "../../src/config/settings.js";
import { parseDuration, RETENTION_DEFAULTS } from "../../src/retention/settings.js";
import { configError } from "./helpers.js";

const ECHO = `  - name: echo
    version: 1.0.0
    description: Echoes.
    adapter: { type: echo }
`;

const withRetention = (lines: string) =>
  parseConfig(`server:\n  retention:\n${lines}agents:\n${ECHO}`, {
    filename: "test.yaml",
    env: {},
    baseDir: "/nowhere",
  });

describe("server.retention", () => {
  it("keeps everything forever when absent", async () => {
    const config = await parseConfig(`agents:\n${ECHO}`, { filename: "test.yaml", env: {} });
    expect(config.server.retention).toEqual(RETENTION_DEFAULTS);
    expect(RETENTION_DEFAULTS).toMatchObject({
      finishedStatelessRuns: null,
      frames: null,
      idleThreads: null,
      idleThreadStrategy: "delete",
    });
  });

  it("reads seconds and duration strings, the strategy, the interval and the batch size", async () => {
    const config = await withRetention(
      [
        "    finishedStatelessRuns: 90",
        '    frames: "15m"',
        "    idleThreads: 7d",
        "    idleThreadStrategy: keep-latest",
        "    sweepInterval: 1.5",
        "    batchSize: 50",
        "",
      ].join("\n"),
    );
    expect(config.server.retention).toEqual({
      finishedStatelessRuns: 90,
      frames: 900,
      idleThreads: 7 * 86_400,
      idleThreadStrategy: "keep-latest",
      sweepInterval: 1.5,
      batchSize: 50,
    });
    // The file's section reaches the server's settings whole.
    const settings = mergeSettings(DEFAULT_SETTINGS, config.server);
    expect(settings.retention).toEqual(config.server.retention);
  });

  it("refuses a duration it cannot read, naming the key and the forms it takes", async () => {
    const error = await configError(() => withRetention('    frames: "7 days"\n'));
    expect(error.message).toContain(
      'test.yaml:3:13: server.retention.frames must be a number of seconds (> 0) or a duration such as "90s", "15m", "1h", "7d" (got "7 days")',
    );
    const negative = await configError(() => withRetention("    idleThreads: -5\n"));
    expect(negative.message).toContain("server.retention.idleThreads must be a number of seconds");
  });

  it("refuses a zero retention (that would not be keeping anything) and a zero interval", async () => {
    const error = await configError(() =>
      withRetention('    finishedStatelessRuns: "0s"\n    sweepInterval: 0m\n'),
    );
    expect(error.message).toContain(
      'server.retention.finishedStatelessRuns must be longer than zero (got "0s")',
    );
    expect(error.message).toContain(
      'server.retention.sweepInterval must be longer than zero (got "0m")',
    );
  });

  it("refuses an unknown strategy, a bad batch size and a misspelt key", async () => {
    const error = await configError(() =>
      withRetention("    idleThreadStrategy: purge\n    batchSize: 0\n    idleThread: 1h\n"),
    );
    expect(error.message).toContain(
      'server.retention.idleThreadStrategy must be one of delete, keep-latest (got "purge")',
    );
    expect(error.message).toContain("server.retention.batchSize must be >= 1 (got 0)");
    expect(error.message).toContain(
      'server.retention.idleThread is not a known key (did you mean "idleThreads"?)',
    );
  });
});

describe("parseDuration", () => {
  it("turns numbers and unit strings into seconds", () => {
    expect(parseDuration(42)).toBe(42);
    expect(parseDuration("250ms")).toBe(0.25);
    expect(parseDuration("90s")).toBe(90);
    expect(parseDuration("15m")).toBe(900);
    expect(parseDuration("1h")).toBe(3600);
    expect(parseDuration("1.5h")).toBe(5400);
    expect(parseDuration("7d")).toBe(604_800);
  });

  it("throws on anything else", () => {
    for (const bad of ["", "7", "1w", "1 h", "-1s", "h"]) {
      expect(() => parseDuration(bad), bad).toThrow(/not a duration/);
    }
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, "0s"]) {
      expect(() => parseDuration(bad), String(bad)).toThrow(/positive/);
    }
  });
});
