// Values frames of a long answer, rebuilt as a stream rebuilds them: the 10 MB answer of the
// `storage` workload (50,000 TEXT_MESSAGE_CONTENT events of 200 characters in one message), its
// frames as stored, fed to `ValuesRebuilder` (dist/engine/frames/codec.js) with a values frame
// every EVERY events, each written as the ACP stream writes a long one (`jsonPieces`, piece by
// piece; here counted, not sent). What the `storage` row's values stream does when a client
// keeps up is one or two such frames; a client that cannot, or an agent that pauses between
// events, makes it render many.
//
//   node --expose-gc bench/values-rebuild-ab.mjs [other checkout's dist dir] [EVERY=500] [rounds=3]
//
// Prints, per round and build: values frames rendered, MB written, seconds, and the peak RSS
// above the start (sampled every 1,000 frames), then this build's ratios to the other.
import { join } from "node:path";
import { ROOT } from "./lib/servers.mjs";

const child = process.argv[2] === "--child";
const other = child ? undefined : process.argv[2];
const EVERY = Number(process.env.VALUES_REBUILD_EVERY ?? process.argv[3] ?? 500);
const ROUNDS = Number(process.argv[4] ?? 3);
if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");

/** The same prose-like deltas as the storage workload's (a seeded word generator). */
function deltas(count) {
  const words = (
    "the a an agent answer streams long text of and to in is that it for on with as " +
    "model tool call result message thread run value state output server client protocol"
  ).split(" ");
  let state = 20261201;
  const out = [];
  for (let i = 0; i < count; i++) {
    let delta = "";
    while (delta.length < 200) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      delta += `${words[(state >>> 8) % words.length]} `;
    }
    out.push(delta.slice(0, 200));
  }
  return out;
}

async function measure(dist) {
  const codec = await import(join(dist, "engine/frames/codec.js"));
  const { jsonPieces } = await import(join(dist, "json-pieces.js"));
  const frames = [
    { mode: "values", data: codec.valuesKeyframeData({}, []) },
    {
      mode: "custom",
      data: codec.customFrameData({
        type: "TEXT_MESSAGE_START",
        messageId: "m1",
        role: "assistant",
      }),
    },
  ];
  for (const [i, delta] of deltas(50_000).entries()) {
    const event = { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta };
    frames.push({ mode: "custom", data: codec.customFrameData(event) });
    if (i % EVERY === EVERY - 1) frames.push({ mode: "values", data: codec.VALUES_DELTA_DATA });
  }
  globalThis.gc();
  const start = process.memoryUsage().rss;
  let peak = start;
  let bytes = 0;
  let rendered = 0;
  const rebuilder = new codec.ValuesRebuilder();
  const t0 = performance.now();
  for (const [i, frame] of frames.entries()) {
    const read = rebuilder.nextLazy({ ...frame, run_id: "r", seq: i + 1 });
    if (read?.mode === "values") {
      rendered++;
      for (const piece of jsonPieces(read.value())) bytes += Buffer.byteLength(piece);
    }
    if (i % 1000 === 0) peak = Math.max(peak, process.memoryUsage().rss);
  }
  const seconds = (performance.now() - t0) / 1000;
  return { rendered, mb: bytes / 2 ** 20, seconds, peakMb: (peak - start) / 2 ** 20 };
}

if (child) {
  process.stdout.write(JSON.stringify(await measure(process.argv[3])));
  process.exit(0);
}

const sides = [["ours", join(ROOT, "dist")]];
if (other) sides.push(["other", other]);
const { spawnSync } = await import("node:child_process");
for (let round = 1; round <= ROUNDS; round++) {
  const results = {};
  for (const [label, dist] of sides) {
    // Each build in a process of its own: one build's garbage is not the other's peak.
    const child = spawnSync(process.execPath, ["--expose-gc", process.argv[1], "--child", dist], {
      encoding: "utf8",
      env: { ...process.env, VALUES_REBUILD_EVERY: String(EVERY) },
    });
    if (child.status !== 0) throw new Error(child.stderr);
    results[label] = JSON.parse(child.stdout);
    const r = results[label];
    console.log(
      `round ${round} ${label}: ${r.rendered} values frames, ${r.mb.toFixed(0)} MB written, ` +
        `${r.seconds.toFixed(2)} s, peak ${r.peakMb.toFixed(0)} MB above start`,
    );
  }
  if (results.other) {
    const { ours, other: base } = results;
    console.log(
      `round ${round} ours ÷ other: time ${(ours.seconds / base.seconds).toFixed(2)}×, ` +
        `peak RSS ${(ours.peakMb / base.peakMb).toFixed(2)}×`,
    );
  }
}
