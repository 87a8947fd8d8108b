/**
 * The one rule for rows of a file that write the same record (the same business key, src/api/schemas/entities.ts):
 * the later row wins; the earlier one is superseded: not sent, not a reject, listed in the report with the line
 * that superseded it. Bulk sending, import sending and the dry run all ask this module.
 *
 * Which entities: product_store, whose bulk and import refuse a second row of a key as `duplicate_key` (so the agent
 * must never send two in one request). Where: a bulk batch never holds two rows of a key (rows with the same key in
 * different batches are sent in file order, so the later one wins on the platform too); an import file never holds
 * two (it is one upload). The dry run counts what the push in the same mode would supersede.
 */
import Database from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import { BUSINESS_KEY_FIELDS, type Entity } from '../api/schemas/index.ts';

/** Whether a later row of a key supersedes an earlier one for this entity. */
export function supersedesDuplicates(entity: Entity): boolean {
  return entity === 'product_store';
}

export function supersededMessage(entity: Entity, winnerLine: number): string {
  return `superseded by line ${winnerLine} with the same ${BUSINESS_KEY_FIELDS[entity].join(' and ')}`;
}

/**
 * Within one bulk batch: the rows (by index, in file order) whose key comes again later in the batch, each with the
 * index of the last row of its key (the winner). Empty when every key is distinct (the common case: one Map pass).
 */
export function supersededInBatch(keys: readonly string[]): Map<number, number> {
  const last = new Map<string, number>();
  keys.forEach((key, i) => last.set(key, i));
  const losers = new Map<number, number>();
  if (last.size === keys.length) return losers;
  keys.forEach((key, i) => {
    const winner = last.get(key) as number;
    if (winner !== i) losers.set(i, winner);
  });
  return losers;
}

/** Keys written between two flushes of FileKeys. */
const FLUSH_ROWS = 10_000;

/**
 * Within one whole file (an import upload, or the dry run of one): every valid row's key and line, appended to a
 * scratch database of its own, SQLite's private temporary database (on disk, removed when closed; never fsynced; not
 * the state database, so it works whatever the state backend and never holds the state connection). Memory stays
 * flat for a file of millions of rows: appends cost little, and the one grouping at the end sorts on disk.
 */
export class FileKeys {
  readonly #db = new Database(''); // '' is SQLite's private temporary database
  readonly #insert: BetterSqlite3.Statement;
  #pending: [string, number][] = [];

  constructor() {
    this.#db.exec('CREATE TABLE file_keys (key TEXT NOT NULL, line INTEGER NOT NULL)');
    this.#insert = this.#db.prepare('INSERT INTO file_keys (key, line) VALUES (?, ?)');
  }

  add(key: string, line: number): void {
    this.#pending.push([key, line]);
    if (this.#pending.length >= FLUSH_ROWS) this.#flush();
  }

  /** The lines a later line of the same key supersedes, each with the last line of its key. */
  superseded(): Map<number, number> {
    this.#flush();
    const rows = this.#db
      .prepare(
        `SELECT k.line AS line, w.last AS winner FROM file_keys k
         JOIN (SELECT key, max(line) AS last, count(*) AS n FROM file_keys GROUP BY key HAVING n > 1) w ON w.key = k.key
         WHERE k.line < w.last`,
      )
      .all() as { line: number; winner: number }[];
    return new Map(rows.map((r) => [r.line, r.winner]));
  }

  /** Removes the scratch database; safe more than once. */
  close(): void {
    this.#pending = [];
    if (this.#db.open) this.#db.close();
  }

  #flush(): void {
    if (this.#pending.length === 0) return;
    const rows = this.#pending;
    this.#pending = [];
    this.#db.transaction(() => {
      for (const [key, line] of rows) this.#insert.run(key, line);
    })();
  }
}
