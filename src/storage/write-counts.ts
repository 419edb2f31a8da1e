/**
 * What a backend sends to its database, counted where the statements are issued: commits of
 * transactions that wrote something, and statements by kind. Both backends count the same way
 * (transaction control — BEGIN, COMMIT, SAVEPOINT, RELEASE, ROLLBACK, SET — is not a statement
 * here), so `acp_storage_commits_total` and `acp_storage_statements_total` compare them, and a
 * test can hold the writes of one run to a number. The writes a PostgreSQL group commit gave up
 * on are counted too (`acp_storage_write_give_ups_total`).
 */

export type StatementKind = "select" | "insert" | "update" | "delete" | "other";

/**
 * Why a write left a shared group commit to run alone (PostgreSQL, ./postgres/group-commit.ts):
 * it waited for a lock past the group's lock timeout, was a deadlock victim, or met a
 * serialization failure. SQLite has one writer and never gives up.
 */
export type GiveUpReason = "lock_timeout" | "deadlock" | "serialization";

export interface WriteCounts {
  /**
   * Transactions that changed rows and committed (an autocommit write statement is one). A poll
   * that finds nothing to update changes nothing and is no commit here, as in SQLite's WAL.
   */
  commits: number;
  statements: Record<StatementKind, number>;
  /** Writes a group commit gave up on and ran alone, by reason (always zero on SQLite). */
  giveUps: Record<GiveUpReason, number>;
}

/** Transaction control: not counted as a statement (it frames the ones that are). */
const CONTROL = /^\s*(begin|commit|end|rollback|savepoint|release|set|reset)\b/i;
const WRITES: ReadonlySet<StatementKind> = new Set(["insert", "update", "delete"]);

/**
 * The statement's kind by its main command, as the database's command tag names it: a `WITH`
 * statement is the command after its common table expressions (`WITH x AS (INSERT …) UPDATE …`
 * is an UPDATE). `null` for transaction control.
 */
export function statementKind(sql: string): StatementKind | null {
  if (CONTROL.test(sql)) return null;
  const text = sql.trimStart();
  const head = /^[a-z]+/i.exec(text)?.[0]?.toLowerCase();
  if (head === "with") return mainCommandAfterCtes(text);
  return kindOf(head);
}

/** Whether a statement of this kind changes rows. */
export function isWrite(kind: StatementKind | null): boolean {
  return kind !== null && WRITES.has(kind);
}

function kindOf(word: string | undefined): StatementKind {
  switch (word) {
    case "select":
    case "insert":
    case "update":
    case "delete":
      return word;
    case "replace":
      return "insert";
    default:
      return "other";
  }
}

/** The first keyword at parenthesis depth 0 after `WITH name AS (…), …`. */
function mainCommandAfterCtes(text: string): StatementKind {
  let depth = 0;
  let sawBody = false;
  for (let i = 4; i < text.length; i++) {
    const c = text[i];
    if (c === "(") depth++;
    else if (c === ")") {
      depth--;
      if (depth === 0) sawBody = true;
    } else if (c === "," && depth === 0) {
      sawBody = false; // the next common table expression
    } else if (depth === 0 && sawBody && /[a-z]/i.test(c ?? "")) {
      const word = /^[a-z]+/i.exec(text.slice(i))?.[0]?.toLowerCase();
      if (word !== "as" && word !== "not" && word !== "materialized") return kindOf(word);
      i += (word?.length ?? 1) - 1;
    }
  }
  return "other";
}

/** The running totals one storage keeps (plain integers: counting costs an increment). */
export class WriteCounter {
  commits = 0;
  readonly statements: Record<StatementKind, number> = {
    select: 0,
    insert: 0,
    update: 0,
    delete: 0,
    other: 0,
  };
  readonly giveUps: Record<GiveUpReason, number> = {
    lock_timeout: 0,
    deadlock: 0,
    serialization: 0,
  };

  /** Counts `sql` if it is a statement; returns its kind (null for transaction control). */
  statement(sql: string): StatementKind | null {
    const kind = statementKind(sql);
    if (kind !== null) this.statements[kind]++;
    return kind;
  }

  commit(): void {
    this.commits++;
  }

  giveUp(reason: GiveUpReason): void {
    this.giveUps[reason]++;
  }

  snapshot(): WriteCounts {
    return {
      commits: this.commits,
      statements: { ...this.statements },
      giveUps: { ...this.giveUps },
    };
  }
}
