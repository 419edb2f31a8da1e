// Build scripts say what they did only when asked: `npm run build --verbose` (npm passes its log
// level on as npm_config_loglevel), `node scripts/<script>.mjs --verbose`, or VERBOSE=1.
// Warnings and errors are always printed.
export const verbose =
  process.argv.includes("--verbose") ||
  ["verbose", "silly"].includes(process.env.npm_config_loglevel ?? "") ||
  process.env.VERBOSE === "1";

/** A progress line, printed only in verbose mode. */
export function info(line) {
  if (verbose) console.log(line);
}
