import { type ClientRequest, type IncomingMessage, request } from "node:http";

/** One SSE frame as received: `id` and `event` as written, `data` parsed as JSON. */
export interface SseFrame {
  id: string;
  event: string;
  data: unknown;
  /** The data line(s) as received, before parsing. */
  rawData: string;
}

export interface SseConnection {
  status: number;
  headers: IncomingMessage["headers"];
  /** Frames received so far, in order. */
  frames: SseFrame[];
  /** Comment lines received so far (without the leading ":"). */
  comments: string[];
  /** Everything received, verbatim. */
  raw(): string;
  /** Resolves with the frame `index` (0-based) once it arrived; rejects when the stream ends first. */
  frame(index: number, timeoutMs?: number): Promise<SseFrame>;
  /** Resolves when the server closed the stream (after its last frame). */
  ended: Promise<void>;
  /** Drops the connection from the client side (a client that goes away). */
  destroy(): void;
}

export interface SseRequest {
  method?: "GET" | "POST";
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * A small SSE client on node:http: parses frames (`id`, `event`, `data`) and comments as they
 * arrive. A non-2xx or non-event-stream answer resolves with `status` and no frames.
 */
export function openSse(baseUrl: string, path: string, options: SseRequest = {}) {
  const url = new URL(path, baseUrl);
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise<SseConnection>((resolve, reject) => {
    const req: ClientRequest = request(url, {
      method: options.method ?? (body === undefined ? "GET" : "POST"),
      headers: {
        accept: "text/event-stream",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...options.headers,
      },
    });
    req.on("error", reject);
    req.on("response", (res) => {
      const frames: SseFrame[] = [];
      const comments: string[] = [];
      const waiters = new Set<() => void>();
      let received = "";
      let buffer = "";
      let done = false;
      const wakeAll = () => {
        for (const wake of [...waiters]) wake();
      };
      const ended = new Promise<void>((resolveEnd) => {
        const finish = () => {
          done = true;
          wakeAll();
          resolveEnd();
        };
        res.on("end", finish);
        res.on("close", finish);
        res.on("error", finish);
      });
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        received += chunk;
        buffer += chunk;
        let boundary = buffer.indexOf("\n\n");
        while (boundary !== -1) {
          const block = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          parseBlock(block, frames, comments);
          boundary = buffer.indexOf("\n\n");
        }
        wakeAll();
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        frames,
        comments,
        raw: () => received,
        ended,
        destroy: () => {
          req.destroy();
          res.destroy();
        },
        frame(index, timeoutMs = 5_000) {
          return new Promise<SseFrame>((resolveFrame, rejectFrame) => {
            const timer = setTimeout(() => {
              waiters.delete(check);
              rejectFrame(new Error(`no frame ${index} within ${timeoutMs} ms`));
            }, timeoutMs);
            const check = () => {
              const frame = frames[index];
              if (frame === undefined && !done) return;
              clearTimeout(timer);
              waiters.delete(check);
              if (frame) resolveFrame(frame);
              else rejectFrame(new Error(`stream ended after ${frames.length} frames`));
            };
            waiters.add(check);
            check();
          });
        },
      });
    });
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function parseBlock(block: string, frames: SseFrame[], comments: string[]): void {
  let id = "";
  let event = "";
  const data: string[] = [];
  let isFrame = false;
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) {
      comments.push(line.slice(1).trim());
      continue;
    }
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    isFrame = true;
    if (field === "id") id = value;
    else if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  if (!isFrame) return;
  const rawData = data.join("\n");
  frames.push({ id, event, data: rawData === "" ? undefined : JSON.parse(rawData), rawData });
}

/** Collects a whole stream: resolves after the server closed it. */
export async function readSse(baseUrl: string, path: string, options: SseRequest = {}) {
  const connection = await openSse(baseUrl, path, options);
  await connection.ended;
  return connection;
}
