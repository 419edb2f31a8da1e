import { setFlagsFromString } from "node:v8";

/**
 * Two of V8's habits that pay off under load and only cost memory while the server starts:
 * held from the moment this module is imported until `releaseAfterStartUp`, which the CLI calls
 * once the server listens. Both flags are read by V8 each time it decides, so switching them
 * back restores V8's behaviour for everything after start-up (the growth factor differs, see
 * below). Together they took some 20 MB off the RSS of a server just started (bench/run.mjs,
 * "idle RSS right after start").
 *
 * - The young generation's growth. V8 doubles the young generation (two semi-spaces, from 1 MB
 *   each up to 16 MB) whenever more than its size survived the collections since the last
 *   doubling. Start-up is almost nothing but survivors (modules, routes, the config), so by the
 *   time the server listens it has grown to 8 MB semi-spaces: some 10 MB of RSS kept at rest.
 *   Released, it grows straight to its maximum the first time it grows (growth factor 16, not
 *   V8's 2): a server at rest keeps its initial 1 MB, and the first burst of work (runs, streams)
 *   gets the 16 MB it would have reached soon after on V8's doubling, which started from 8 MB.
 *   Doubling from 1 MB instead would grow the young generation piecemeal during that burst,
 *   collecting more often meanwhile.
 * - Optimizing compilation (TurboFan). Start-up code runs once or a few times, yet a few
 *   functions get hot enough to be optimized: chiefly Node's CommonJS export scanner, run over
 *   every CommonJS package imported. Each optimization job runs on a V8 worker thread, whose
 *   malloc arena keeps the compiler's memory afterwards: some 10 MB of RSS for code that never
 *   runs again. Until release, functions run in V8's interpreter and baseline compiler.
 *
 * Importing this module holds both: the CLI imports it before anything else (ES modules are
 * evaluated in import order) and imports the server only after it (see cli.ts).
 */

/** After start-up: 1 MB × 16 reaches V8's default maximum semi-space (16 MB) at once. */
const GROWTH_FACTOR = 16;

/** Whoever started node chose these: their choice stands. */
const callerArgs = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)];
const callerChose = (pattern: RegExp) => callerArgs.some((arg) => pattern.test(arg));

const holds: Array<() => void> = [];

if (!callerChose(/semi[-_]space/)) {
  setFlagsFromString("--semi-space-growth-factor=1");
  holds.push(() => setFlagsFromString(`--semi-space-growth-factor=${GROWTH_FACTOR}`));
}
if (!callerChose(/^--(no-)?(opt|turbofan)(=|$)|jitless|max-opt/)) {
  setFlagsFromString("--no-turbofan");
  holds.push(() => setFlagsFromString("--turbofan"));
}

/** From now on V8 optimizes again, and the young generation may grow (idempotent). */
export function releaseAfterStartUp(): void {
  for (const release of holds.splice(0)) release();
}
