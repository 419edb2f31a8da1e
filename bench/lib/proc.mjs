// Process helpers for the benchmarks: CPU pinning, spawning servers that are always killed,
// free ports, readiness, and the server's CPU time and RSS read from /proc.
import { execFileSync, spawn } from "node:child_process";
import { createWriteStream, existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";

/** Every child this process started and that has not exited yet. */
const children = new Set();
let hooksInstalled = false;

function killAllNow(signal = "SIGKILL") {
  for (const child of children) {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/**
 * Kills every spawned child when this process ends, whatever the reason: normal exit, an
 * exception, Ctrl-C (SIGINT) or SIGTERM/SIGHUP.
 */
export function installCleanupHooks() {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on("exit", () => killAllNow("SIGKILL"));
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping ${children.size} child process(es)\n`);
      killAllNow("SIGKILL");
      process.exit(130);
    });
  }
  process.on("uncaughtException", (err) => {
    process.stderr.write(`bench: uncaught ${err?.stack ?? err}\n`);
    killAllNow("SIGKILL");
    process.exit(1);
  });
  process.on("unhandledRejection", (err) => {
    process.stderr.write(`bench: unhandled rejection ${err?.stack ?? err}\n`);
    killAllNow("SIGKILL");
    process.exit(1);
  });
}

/** The CPU layout and whether `taskset` pinning is possible (2+ CPUs and taskset on PATH). */
export function pinningPlan() {
  const disabled = process.env.BENCH_NO_PIN === "1";
  let taskset = null;
  try {
    taskset = execFileSync("sh", ["-c", "command -v taskset"], { encoding: "utf8" }).trim() || null;
  } catch {
    taskset = null;
  }
  const allowed = allowedCpus();
  const ok = !disabled && taskset !== null && allowed.length >= 2;
  return {
    applied: ok,
    taskset,
    serverCpu: ok ? allowed[0] : null,
    loadCpu: ok ? allowed[1] : null,
    reason: disabled
      ? "disabled by BENCH_NO_PIN=1"
      : taskset === null
        ? "taskset not found"
        : allowed.length < 2
          ? `only ${allowed.length} CPU(s) available`
          : `servers on CPU ${allowed[0]}, load generator on CPU ${allowed[1]}`,
  };
}

function allowedCpus() {
  try {
    const line = readFileSync("/proc/self/status", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Cpus_allowed_list:"));
    if (line) {
      const out = [];
      for (const part of line.split(":")[1].trim().split(",")) {
        const [a, b] = part.split("-").map(Number);
        for (let i = a; i <= (b ?? a); i++) out.push(i);
      }
      if (out.length > 0) return out;
    }
  } catch {
    // not Linux
  }
  return cpus().map((_, i) => i);
}

/** Pins this process (all its threads: `-a`) to the load generator's CPU. */
export function pinSelf(plan) {
  if (!plan.applied) return;
  execFileSync(plan.taskset, ["-a", "-cp", String(plan.loadCpu), String(process.pid)], {
    stdio: "ignore",
  });
}

/** Machine facts printed at the top of the results. */
export function machineFacts(plan) {
  let cpuModel = "unknown";
  try {
    const m = readFileSync("/proc/cpuinfo", "utf8").match(/^model name\s*:\s*(.+)$/m);
    if (m) cpuModel = m[1].trim();
  } catch {
    cpuModel = cpus()[0]?.model ?? "unknown";
  }
  let memTotalMb = null;
  try {
    const m = readFileSync("/proc/meminfo", "utf8").match(/^MemTotal:\s*(\d+) kB/m);
    if (m) memTotalMb = Math.round(Number(m[1]) / 1024);
  } catch {
    // not Linux
  }
  return {
    cpuModel,
    cores: cpus().length,
    memTotalMb,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    pinning: plan.applied ? `applied (${plan.reason})` : `not applied (${plan.reason})`,
  };
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Spawns `node <args>` (pinned to the server CPU when the plan says so, or to the load
 * generator's with `onLoadCpu`), logging its output to `logFile`. The child is registered for
 * cleanup; `stop()` ends it (SIGTERM, then SIGKILL).
 */
export function spawnNode(plan, nodeArgs, { logFile, env, cwd, onLoadCpu = false } = {}) {
  const command = plan.applied ? plan.taskset : process.execPath;
  const cpu = onLoadCpu ? plan.loadCpu : plan.serverCpu;
  const args = plan.applied ? ["-c", String(cpu), process.execPath, ...nodeArgs] : nodeArgs;
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  const exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  let tail = "";
  const keep = (chunk) => {
    tail = (tail + chunk.toString()).slice(-8000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  if (logFile) {
    const out = createWriteStream(logFile, { flags: "a" });
    child.stdout.pipe(out);
    child.stderr.pipe(out);
  }
  let done = false;
  exited.then(() => {
    done = true;
  });
  return {
    child,
    // taskset execs node, so this pid is the node process itself.
    pid: child.pid,
    exited,
    get alive() {
      return !done;
    },
    get output() {
      return tail;
    },
    async stop(timeoutMs = 5000) {
      if (done) return exited;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/** Polls `url` until it answers 200; fails when the process exits or after `timeoutMs`. */
export async function waitReady(proc, url, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!proc.alive) {
      throw new Error(`process exited before it was ready:\n${proc.output}`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200) {
        await res.arrayBuffer();
        return;
      }
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  throw new Error(`not ready after ${timeoutMs} ms: ${url}\n${proc.output}`);
}

let clockTicks = null;
function ticksPerSecond() {
  if (clockTicks === null) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** User + system CPU time of a process, in milliseconds (from /proc/<pid>/stat). */
export function cpuTimeMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may contain spaces) start at field 3 (state).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / ticksPerSecond();
}

/** Resident set size of a process, in bytes (VmRSS from /proc/<pid>/status). */
export function rssBytes(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const m = status.match(/^VmRSS:\s*(\d+) kB/m);
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

export function procAvailable() {
  return existsSync(`/proc/${process.pid}/stat`);
}

/** CPU time all CPUs spent busy since boot, in ms (first line of /proc/stat; idle and iowait excluded). */
export function systemBusyMs() {
  const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0];
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user/nice)
  const busy = f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] ?? 0);
  return (busy * 1000) / ticksPerSecond();
}

/** Other CPU the bench causes outside its process tree (the PostgreSQL backends serving it). */
const ownCpuSources = new Set();

/** Counts `totalMs()` (non-decreasing, in ms) as the bench's own CPU in `foreignLoad`. */
export function addOwnCpuSource(source) {
  ownCpuSources.add(source);
}

/**
 * CPU time of this process tree in ms: this process (utime, stime), the children it has already
 * reaped (cutime, cstime), the children still running, and the sources added above.
 */
export function ownTreeCpuMs() {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  let ms = (ticks * 1000) / ticksPerSecond();
  for (const child of children) {
    try {
      ms += cpuTimeMs(child.pid);
    } catch {
      // exited between the two reads
    }
  }
  for (const source of ownCpuSources) ms += source.totalMs();
  return ms;
}

/**
 * Measures CPU used by processes outside this benchmark (other builds or tests on the machine)
 * between start and stop, as a share of one core.
 */
export function foreignLoad() {
  const wall0 = performance.now();
  const busy0 = systemBusyMs();
  const own0 = ownTreeCpuMs();
  return () => {
    const wall = performance.now() - wall0;
    const foreign = systemBusyMs() - busy0 - (ownTreeCpuMs() - own0);
    return Math.max(0, foreign / wall);
  };
}
