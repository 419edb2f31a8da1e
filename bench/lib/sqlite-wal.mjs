// Counting the commits a SQLite server makes, from outside it, in its write-ahead log.
//
// Every write transaction that commits appends its pages to the WAL as frames, and the last
// frame of each transaction carries the database size ("commit frame"): commit frames are
// commits. A read-only transaction writes nothing and is not counted, and neither is a write
// transaction that changed no page. The WAL starts over (new salts) after a checkpoint that
// copied everything back; to keep it from doing so mid-measurement the bench holds a read
// snapshot on a frame of the log (SQLite cannot checkpoint past a reader's snapshot), and the
// count is refused if the salts changed anyway.
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/** Reads the WAL of `dbPath`: salts, frames and commit frames of its current generation. */
export function readWal(dbPath) {
  const path = `${dbPath}-wal`;
  let size = 0;
  try {
    size = statSync(path).size;
  } catch {
    return { salt: null, frames: 0, commits: 0, bytes: 0 };
  }
  if (size < WAL_HEADER) return { salt: null, frames: 0, commits: 0, bytes: size };
  const fd = openSync(path, "r");
  try {
    const header = Buffer.alloc(WAL_HEADER);
    readSync(fd, header, 0, WAL_HEADER, 0);
    const pageSize = header.readUInt32BE(8) || 65536;
    const salt1 = header.readUInt32BE(16);
    const salt2 = header.readUInt32BE(20);
    const frameSize = FRAME_HEADER + pageSize;
    const frameHeader = Buffer.alloc(FRAME_HEADER);
    let frames = 0;
    let commits = 0;
    for (let offset = WAL_HEADER; offset + frameSize <= size; offset += frameSize) {
      readSync(fd, frameHeader, 0, FRAME_HEADER, offset);
      // A frame of an earlier generation (left over past the current end) has other salts.
      if (frameHeader.readUInt32BE(8) !== salt1 || frameHeader.readUInt32BE(12) !== salt2) break;
      frames += 1;
      if (frameHeader.readUInt32BE(4) !== 0) commits += 1;
    }
    return { salt: `${salt1}:${salt2}`, frames, commits, bytes: frames * frameSize, pageSize };
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens its own connection to the server's database file and holds a read transaction, so the
 * WAL cannot start over while commits are counted. Call after at least one write (the snapshot
 * then sits on a WAL frame, not on the database file alone). `release()` ends it.
 */
export function holdSnapshot(dbPath) {
  const Database = require("better-sqlite3");
  const db = new Database(dbPath, { fileMustExist: true });
  db.pragma("busy_timeout = 5000");
  db.exec("BEGIN");
  db.prepare("SELECT count(*) AS n FROM sqlite_schema").get();
  return {
    release() {
      try {
        db.exec("COMMIT");
      } finally {
        db.close();
      }
    },
  };
}
