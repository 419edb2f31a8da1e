import type Database from "better-sqlite3";

/**
 * Prepares each SQL text once per connection. Fixed statements are prepared up front by the
 * repositories; searches build their SQL from the filters given, so each shape lands here once.
 */
export class StatementCache {
  readonly #db: Database.Database;
  readonly #cache = new Map<string, Database.Statement>();

  constructor(db: Database.Database) {
    this.#db = db;
  }

  get(sql: string): Database.Statement {
    let statement = this.#cache.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#cache.set(sql, statement);
    }
    return statement;
  }
}
