import { setFlagsFromString } from "node:v8";

/**
 * Keeps V8's young generation at its initial size while the server starts, and gives it back
 * its usual growth once the server listens.
 *
 * V8 doubles the young generation (two semi-spaces, from 1 MB each up to 16 MB) whenever more
 * than its size survived the collections since the last doubling. Start-up is almost nothing
 * but survivors (modules, compiled validators, routes, the config), so by the time the server
 * listens the young generation has grown to 8 MB semi-spaces, some 14 MB of RSS that a server at
 * rest then keeps until V8's memory reducer gets to it. Under load the growth is what keeps
 * collections rare; only during start-up is it a cost with nothing to buy. The growth factor is
 * read by V8 at each growth, so it can be switched off here and back on after `listen`.
 *
 * Importing this module holds the growth: the CLI imports it before anything else (ES modules
 * are evaluated in import order), so that the modules it loads are already held.
 */

/** V8's default growth factor (`--semi-space-growth-factor`). */
const DEFAULT_GROWTH_FACTOR = 2;

/** Whoever started node chose the young generation's sizing: theirs stands. */
const chosenByCaller = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((arg) =>
  /semi[-_]space/.test(arg),
);

let held = false;
if (!chosenByCaller) {
  setFlagsFromString("--semi-space-growth-factor=1");
  held = true;
}

/** The young generation grows again as it would have (idempotent). */
export function releaseYoungGeneration(): void {
  if (!held) return;
  setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
  held = false;
}
