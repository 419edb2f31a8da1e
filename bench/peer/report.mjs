// What `npm run bench:peer` prints: the machine, each lane's table, other load, the notes.
import { fmt, fmtNum } from "../lib/format.mjs";

/** Prints the results to stdout; `a2aSection` is the A2A lane's own lines (a2a-lane.mjs). */
export function printPeerReport({ facts, rows, workloadRuns, settings, a2aSection }) {
  const { seconds: SECONDS, rounds: ROUNDS, peerWorkers: PEER_WORKERS, only: ONLY } = settings;
  const header = ["workload", "figure", "ours", "peer", "ours ÷ peer", "better"];
  const lines = rows.map((r) => [
    r.workload,
    r.figure,
    fmt(r.ours, r.unit),
    fmt(r.peer, r.unit),
    r.ratio === null ? "n/a" : `${fmtNum(r.ratio, r.ratio < 0.1 ? 3 : 2)}×`,
    r.better === "higher" ? "higher is better" : "lower is better",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => String(l[i]).length)));
  const pad = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(" | ")} |`;
  const out = ["", "## Machine"];
  out.push(
    `CPU: ${facts.cpuModel}; cores: ${facts.cores}; Node: ${facts.node}; pinning: ${facts.pinning}`,
  );
  out.push(`build: ${facts.build}; BENCH_SECONDS=${SECONDS}, BENCH_ROUNDS=${ROUNDS}`);
  if (ONLY.includes("langgraph") || ONLY.includes("copilotkit")) {
    out.push(
      `peers: @langchain/langgraph-api ${facts.peerVersion}, ${PEER_WORKERS} queue workers, its in-memory storage (flushed to files in a temp dir), for the rows without "CopilotKit"; @copilotkit/runtime ${facts.copilotkitVersion} (CopilotRuntime, InMemoryAgentRunner) for the "CopilotKit route" rows; ours: dist/cli.js on SQLite`,
    );
  }
  if (rows.length > 0) {
    out.push("", "## Ours beside the peer (measured alternately in this run)", "");
    out.push(pad(header));
    out.push(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
    for (const l of lines) out.push(pad(l));
  }
  if (a2aSection) out.push("", ...a2aSection);
  out.push("");
  out.push(
    `Other processes' CPU during each workload (share of one core): ${workloadRuns.map((w) => `${w.id} ${Math.round(w.foreignLoad * 100)} %`).join(", ")}`,
  );
  if (workloadRuns.some((w) => w.foreignLoad > 0.1)) {
    out.push(
      "WARNING: the machine was busy with other work during this run; the absolute figures are unreliable, the ratios less so.",
    );
  }
  out.push("", "## Notes");
  for (const r of rows) if (r.notes) out.push(`- ${r.workload} / ${r.figure}: ${r.notes}`);
  process.stdout.write(`${out.join("\n")}\n`);
}
