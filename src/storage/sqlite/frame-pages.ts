import { invalid } from "../../util/errors.js";
import type { RunFrame } from "../types.js";

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

/** A page as stored: its run, its last frame's seq, its frame count and its encoded frames. */
export interface FramePage {
  run_id: string;
  last_seq: number;
  frames: number;
  data: string;
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
      pages.push({ run_id: runId, last_seq: frame.seq, frames: count, data: parts.join("") });
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
  const { data, last_seq: lastSeq, run_id: runId } = page;
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
