-- Frames are stored a page of consecutive frames of one run per row (see frame-pages.ts), found
-- by the page's last seq: a row per frame cost about as much again as a token-sized frame.
-- A rowid table rather than WITHOUT ROWID: a page of several KB spills into overflow pages, and
-- only a rowid table's rows keep the part that does not fill a whole overflow page in the leaf
-- (an index b-tree leaves it in a last overflow page, half empty on average: 13% more bytes).
-- Each older frame becomes a page of its own, which the page format writes without a length.
CREATE TABLE run_frame_pages (
  page     INTEGER PRIMARY KEY,
  run_id   TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  last_seq INTEGER NOT NULL CHECK (last_seq > 0),
  frames   INTEGER NOT NULL CHECK (frames > 0),
  data     TEXT NOT NULL
);

INSERT INTO run_frame_pages (run_id, last_seq, frames, data)
  SELECT run_id, seq, 1, seq || ' ' || substr(mode, 1, 1) || ' ' || data
  FROM run_frames ORDER BY run_id, seq;

DROP TABLE run_frames;
ALTER TABLE run_frame_pages RENAME TO run_frames;
CREATE UNIQUE INDEX run_frames_by_run ON run_frames (run_id, last_seq);
