import { setFlagsFromString } from "node:v8";

/**
 * A habit of V8's that pays off under load and only costs memory while the server starts:
 * compiling hot code (TurboFan, and the baseline compiler with it), held from the moment this
 * module is imported until `releaseAfterStartUp`, which the CLI calls once the server listens. V8 reads the flags each
 * time it decides whether to compile a function, so switching them back restores V8's behaviour
 * for everything after start-up (checked with `--trace-opt` under load).
 *
 * The baseline compiler (Sparkplug) is held with it, for the code it would keep for start-up
 * functions (checked with `--trace-baseline-batch-compilation`: it compiles again under load).
 *
 * Start-up code runs once or a few times, yet a few functions get hot enough to be optimized:
 * chiefly Node's CommonJS export scanner, run over every CommonJS package imported. Each
 * optimization job runs on a V8 worker thread, whose malloc arena keeps the compiler's memory
 * afterwards: some 10 MB of RSS for code that never runs again (bench/run.mjs, "idle RSS right
 * after start": about 92 to 81 MB; with Sparkplug held too, 80 MB). Until release, functions
 * run in V8's interpreter.
 *
 * The young generation's growth is left alone. Holding it at its initial size during start-up
 * took another 8 MB off the idle figure, but a server that then meets its first heavy run with
 * a 1 MB young generation promotes that run's short-lived objects to the old generation: a
 * 10 MB answer's `wait` peaked 25 MB higher (BENCH_ONLY=storage), whatever the growth factor
 * set at release.
 *
 * Importing this module holds it: the CLI imports it before anything else (ES modules are
 * evaluated in import order) and imports the server only after it (see cli.ts).
 */

/** Whoever started node chose these: their choice stands. */
const callerArgs = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)];
const callerChose = (pattern: RegExp) => callerArgs.some((arg) => pattern.test(arg));

const holds: Array<() => void> = [];

if (!callerChose(/^--(no-)?(opt|turbofan)(=|$)|jitless|max-opt/)) {
  setFlagsFromString("--no-turbofan");
  holds.push(() => setFlagsFromString("--turbofan"));
}
// The baseline compiler (Sparkplug) likewise: its code for start-up functions is another
// 1.3 MB at rest, and start-up takes as long without it (630–720 ms to /readyz either way).
if (!callerChose(/sparkplug|jitless/)) {
  setFlagsFromString("--no-sparkplug");
  holds.push(() => setFlagsFromString("--sparkplug"));
}

/** From now on V8 compiles and optimizes again (idempotent). */
export function releaseAfterStartUp(): void {
  for (const release of holds.splice(0)) release();
}
