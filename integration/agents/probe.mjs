/**
 * What an agent's model observed, for the tests to read: one JSON line per observation in the
 * file named by INTEGRATION_PROBE_FILE (nothing is written when it is unset). This is how a test
 * learns, from outside the server process, whether a cancelled run's model was told to stop.
 */
import { appendFileSync } from "node:fs";

/** @param {Record<string, unknown>} observation */
export function observe(observation) {
  const file = process.env.INTEGRATION_PROBE_FILE;
  if (!file) return;
  appendFileSync(file, `${JSON.stringify({ at: Date.now(), ...observation })}\n`);
}
