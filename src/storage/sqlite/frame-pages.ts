import { deflateRawSync, inflateRawSync } from "node:zlib";
import { invalid } from "../../util/errors.js";
import type { RunFrame } from "../types.js";
import { FRAME_DICTIONARY } from "./frame-dictionary.js";

/**
 * How frames are laid out in SQLite: a row of `run_frames` is a page of consecutive frames of
 * one run, keyed by its last frame's seq.
 *
 * A row per frame cost about 85 bytes besides the frame (the run id again, the seq, the mode,
 * the record and cell headers), as much as a token-sized frame itself, and an insert per frame
 * was the largest part of a streaming run's write cost. A page of up to PAGE_FRAMES frames pays
 * that once, and a frame costs its data and a dozen bytes of header.
 *
 * A page's `data` is its frames in ascending seq, each as `<seq> <mode letter> <length> <data>`,
 * the length in UTF-16 code units (JavaScript's string length), except the page's last frame,
 * which is `<seq> <mode letter> <data>` and runs to the end: the page's key tells which frame
 * is last. A page of one frame is therefore `<seq> <mode letter> <data>`, which is how the
 * migration from a row per frame (007) writes each older frame without measuring it in SQL.
 *
 * A page of at least DEFLATE_FROM_CHARS is stored deflated when that is shorter: a BLOB of a
 * format byte and the page's UTF-8 text in raw DEFLATE at speed level 1, with a preset
 * dictionary of the events' JSON (frame-dictionary.ts). An event's JSON repeats its keys and
 * ids (a message's id in every delta, the thread and run ids at the start and end), so a
 * trivial run's page of 1.3 KB stores in about 0.3 KB, and prose about 3 to 1. Pages stored
 * before, and short ones, are text.
 */

/** Frames per page at most, and the characters of frame data after which a page is closed. */
export const PAGE_FRAMES = 64;
export const PAGE_CHARS = 16 * 1024;

const LETTER_OF: Record<string, string> = {
  values: "v",
  custom: "c",
  subagent: "s",
  final: "f",
};
const MODE_OF: Record<string, RunFrame["mode"]> = {
  v: "values",
  c: "custom",
  s: "subagent",
  f: "final",
};

/** Pages shorter than this stay text: deflating them would save a few bytes for its CPU. */
export const DEFLATE_FROM_CHARS = 256;

/** The first byte of a deflated page (with FRAME_DICTIONARY). */
const DEFLATED_PAGE = 0x01;

/**
 * A small window and hash for a short page: most of a deflate call on a page of 1-2 KB is
 * setting up its state, which these make about 4 times cheaper (15 µs instead of 65 for a
 * trivial run's page) for the same size. Long pages get the full window.
 */
const SHORT_PAGE = { level: 1, windowBits: 12, memLevel: 3, dictionary: FRAME_DICTIONARY };
const LONG_PAGE = { level: 1, dictionary: FRAME_DICTIONARY };
const INFLATE = { dictionary: FRAME_DICTIONARY };
const LONG_PAGE_BYTES = 4096;

/** A page as stored: its run, its last frame's seq, its frame count and its encoded frames. */
export interface FramePage {
  run_id: string;
  last_seq: number;
  frames: number;
  /** The frames' text, or that text deflated (`storedPageData`). */
  data: string | Buffer;
}

/**
 * What a page's text is stored as: the text, or, when that is shorter, a BLOB of the format
 * byte, the text's UTF-8 length (LEB128: what `storedTextBytes` reports without inflating it)
 * and the text in raw DEFLATE.
 */
export function storedPageData(text: string): string | Buffer {
  if (text.length < DEFLATE_FROM_CHARS) return text;
  const utf8 = Buffer.from(text, "utf8");
  const deflated = deflateRawSync(utf8, utf8.length < LONG_PAGE_BYTES ? SHORT_PAGE : LONG_PAGE);
  const header: number[] = [DEFLATED_PAGE];
  for (let n = utf8.length; ; n = Math.floor(n / 128)) {
    if (n < 128) {
      header.push(n);
      break;
    }
    header.push((n % 128) | 128);
  }
  if (header.length + deflated.length >= utf8.length) return text;
  const stored = Buffer.allocUnsafe(header.length + deflated.length);
  stored.set(header, 0);
  deflated.copy(stored, header.length);
  return stored;
}

/** A deflated page's text length in UTF-8 bytes and where its DEFLATE bytes start. */
function deflatedHeader(data: Buffer): { bytes: number; start: number } | null {
  if (data[0] !== DEFLATED_PAGE) return null;
  let bytes = 0;
  for (let at = 1, scale = 1; at < data.length && at < 6; at++, scale *= 128) {
    bytes += (data[at]! & 127) * scale;
    if (data[at]! < 128) return { bytes, start: at + 1 };
  }
  return null;
}

/** A page's text from what is stored. */
export function pageText(page: FramePage): string {
  const { data } = page;
  if (typeof data === "string") return data;
  const header = deflatedHeader(data);
  if (header === null) {
    throw new Error(`frame page ${page.last_seq} of run ${page.run_id} has an unknown format`);
  }
  return inflateRawSync(data.subarray(header.start), INFLATE).toString("utf8");
}

/**
 * The UTF-8 bytes of a stored page's text, deflated or not (retention reports the text it
 * removed, as before pages were deflated). SQLite calls it as `acp_page_text_bytes(data)`.
 */
export function storedTextBytes(data: string | Buffer): number {
  if (typeof data === "string") return Buffer.byteLength(data, "utf8");
  return deflatedHeader(data)?.bytes ?? data.length;
}

/**
 * One run's frames, in ascending seq, cut into pages. A frame whose data alone passes
 * PAGE_CHARS still makes a page of its own rather than being split.
 */
export function toPages(runId: string, frames: readonly RunFrame[]): FramePage[] {
  const pages: FramePage[] = [];
  let parts: string[] = [];
  let chars = 0;
  let count = 0;
  for (let i = 0; i < frames.length; i++) {
    const frame = frames[i]!;
    const letter = LETTER_OF[frame.mode];
    if (letter === undefined) throw invalid("frame: a field has a value outside its allowed set");
    count += 1;
    chars += frame.data.length;
    const closes = count === PAGE_FRAMES || chars >= PAGE_CHARS || i === frames.length - 1;
    if (closes) {
      parts.push(`${frame.seq} ${letter} `, frame.data);
      pages.push({
        run_id: runId,
        last_seq: frame.seq,
        frames: count,
        data: storedPageData(parts.join("")),
      });
      parts = [];
      chars = 0;
      count = 0;
    } else {
      parts.push(`${frame.seq} ${letter} ${frame.data.length} `, frame.data);
    }
  }
  return pages;
}

/** The frames of a page with seq > afterSeq, appended to `out` up to `limit` frames in all. */
export function readPage(page: FramePage, afterSeq: number, out: RunFrame[], limit: number): void {
  const { last_seq: lastSeq, run_id: runId } = page;
  const data = pageText(page);
  let at = 0;
  while (at < data.length && out.length < limit) {
    const seqEnd = data.indexOf(" ", at);
    const seq = Number(data.slice(at, seqEnd));
    const mode = MODE_OF[data[seqEnd + 1]!];
    if (mode === undefined || !Number.isSafeInteger(seq)) {
      throw new Error(`frame page ${lastSeq} of run ${runId} is not in the page format`);
    }
    let start = seqEnd + 3;
    let end = data.length;
    if (seq !== lastSeq) {
      const lengthEnd = data.indexOf(" ", start);
      end = lengthEnd + 1 + Number(data.slice(start, lengthEnd));
      start = lengthEnd + 1;
      if (lengthEnd < 0 || !(end <= data.length)) {
        throw new Error(`frame page ${lastSeq} of run ${runId} is not in the page format`);
      }
    }
    if (seq > afterSeq) out.push({ run_id: runId, seq, mode, data: data.slice(start, end) });
    if (seq === lastSeq) return;
    at = end;
  }
}
