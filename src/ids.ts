import { v7 as uuidv7 } from "uuid";

/**
 * A new id for a run, thread, checkpoint or AG-UI run: a UUID v7, which starts with a timestamp.
 *
 * Why not v4: these ids are keys of B-tree indexes (SQLite's and PostgreSQL's). Random keys put
 * every insert on a different leaf page, so each commit writes (and each WAL checkpoint copies)
 * a page per index per row; time-ordered keys append to the same few pages. Measured with
 * `npm run bench`: see the README's Performance section.
 */
export function newId(): string {
  return uuidv7();
}
