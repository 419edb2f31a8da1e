// Cross-replica signal latency: PostgreSQL LISTEN/NOTIFY (what the server uses) beside Redis
// pub/sub (the alternative the design considered), on this machine's local servers.
//   node bench/notify-latency.mjs [count]
import net from "node:net";
import pg from "pg";

const COUNT = Number(process.argv[2] ?? 2000);
const PG_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

function summary(name, samples) {
  samples.sort((a, b) => a - b);
  const at = (q) =>
    samples[Math.min(samples.length - 1, Math.floor(q * samples.length))].toFixed(3);
  console.log(`${name.padEnd(22)} n=${samples.length}  p50 ${at(0.5)} ms  p99 ${at(0.99)} ms`);
}

async function postgres() {
  const listener = new pg.Client({ connectionString: PG_URL });
  const sender = new pg.Client({ connectionString: PG_URL });
  await listener.connect();
  await sender.connect();
  await listener.query("LISTEN bench_latency");
  const samples = [];
  for (let i = 0; i < COUNT; i++) {
    const got = new Promise((resolve) => listener.once("notification", resolve));
    const start = performance.now();
    await sender.query("SELECT pg_notify('bench_latency', $1)", [String(i)]);
    await got;
    samples.push(performance.now() - start);
  }
  await listener.end();
  await sender.end();
  summary("PostgreSQL NOTIFY", samples);
}

/** Minimal RESP over a socket: enough for SUBSCRIBE and PUBLISH. */
function redisConnection() {
  const socket = net.connect(6379, "127.0.0.1");
  let buffer = "";
  const waiting = [];
  const queued = [];
  socket.on("data", (chunk) => {
    buffer += chunk.toString();
    const lines = buffer.split("\r\n");
    buffer = lines.pop();
    for (const line of lines) {
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else queued.push(line);
    }
  });
  const send = (...args) =>
    socket.write(
      `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join("")}`,
    );
  const nextLine = () =>
    queued.length > 0
      ? Promise.resolve(queued.shift())
      : new Promise((resolve) => waiting.push(resolve));
  return { socket, send, nextLine, ready: new Promise((r) => socket.once("connect", r)) };
}

async function redis() {
  const sub = redisConnection();
  const pub = redisConnection();
  await Promise.all([sub.ready, pub.ready]);
  sub.send("SUBSCRIBE", "bench_latency");
  for (let i = 0; i < 6; i++) await sub.nextLine(); // *3 $9 subscribe $13 name :1
  const samples = [];
  for (let i = 0; i < COUNT; i++) {
    const start = performance.now();
    const delivered = (async () => {
      for (let j = 0; j < 7; j++) await sub.nextLine(); // *3 $7 message $13 name $n payload
    })();
    pub.send("PUBLISH", "bench_latency", String(i));
    await pub.nextLine();
    await delivered;
    samples.push(performance.now() - start);
  }
  sub.socket.destroy();
  pub.socket.destroy();
  summary("Redis PUBLISH", samples);
}

await postgres();
await redis().catch((err) => console.log(`Redis pub/sub: not measured (${err.message})`));
