/**
 * In-memory storage of one resource: rows by internal id, an index by business key, the ids of deleted rows (so
 * DELETE can tell "already gone" from "never existed"), and a write log that orders rows for listing.
 *
 * Ids. The table issues its own ids (`issueId`) as encodings of a serial (id-codec.ts) and keeps those rows in an
 * array slot per serial; only ids chosen by a client (single upsert on a path id) live in a Map. A client id that
 * happens to look like one of ours is still treated as foreign, and the serial behind it is never issued.
 *
 * Listing order and cursors. Every write (insert, update) stamps the row with the next write sequence number and
 * appends it to the log; the entry it had before becomes stale and is skipped. A listing walks the log in sequence
 * order and its cursor is the last sequence number returned, so:
 * - rows inserted during a listing appear at its end, never shift a page, never make it skip a row;
 * - a row updated during a listing moves to the end and is returned again: an incremental mirror that stores the
 *   largest `updated_at` it saw can never miss an update (updated_at is monotonic with the sequence).
 *
 * Memory: per row, the row object, an array slot (or a map entry for a client-chosen id), a key index entry
 * (key-index.ts) and three log slots; stale log entries are compacted away once they outnumber live rows.
 */
import type { IdCodec } from './id-codec.ts';
import { KeyIndex } from './key-index.ts';

export interface TableRow {
  /** Internal id: a UUID string, or an integer for competitor prices. */
  readonly id: string | number;
  /** Business key (bulk idempotency), or null when the row is not indexed by one. */
  key: string | null;
  /** Write sequence number of the last write; 0 once deleted. */
  seq: number;
  /** Time of the last write, ms since the epoch; monotonic across the table. */
  updatedAt: number;
}

export interface TablePage<R> {
  readonly rows: R[];
  /** Sequence number of the last row returned, when more rows match after it; else null. */
  readonly nextAfter: number | null;
}

export interface PageRequest<R> {
  readonly limit: number;
  /** Return rows written after this sequence number (the decoded cursor). */
  readonly after: number | null;
  /** Inclusive lower bound on updated_at, ms. */
  readonly updatedAfter: number | null;
  readonly filter?: (row: R) => boolean;
}

const COMPACT_MIN_STALE = 4096;

export class EntityTable<R extends TableRow> {
  readonly #codec: IdCodec<R['id']>;
  /** Rows with an issued id, at index = serial. */
  readonly #bySerial: (R | undefined)[] = [undefined];
  #issued = 0;
  /** The id issueId() returned last: its row is usually inserted next, and then needs no decoding. */
  #lastIssuedId: R['id'] | null = null;
  #live = 0;
  /** Rows with a client-chosen id. */
  readonly #byId = new Map<R['id'], R>();
  readonly #byKey = new KeyIndex<R>();
  readonly #deleted = new Set<R['id']>();
  #logRows: R[] = [];
  #logSeqs: number[] = [];
  #logTimes: number[] = [];
  #seq = 0;
  #stale = 0;
  #lastTime = 0;

  constructor(codec: IdCodec<R['id']>) {
    this.#codec = codec;
  }

  get size(): number {
    return this.#live;
  }

  /** A new internal id, never used before in this table. */
  issueId(): R['id'] {
    for (;;) {
      this.#issued += 1;
      const id = this.#codec.encode(this.#issued);
      this.#bySerial.push(undefined);
      if (this.#byId.size === 0 || !this.#byId.has(id)) {
        this.#lastIssuedId = id;
        return id;
      }
    }
  }

  get deletedCount(): number {
    return this.#deleted.size;
  }

  getById(id: R['id']): R | undefined {
    const serial = this.#serialOf(id);
    return serial === null ? this.#byId.get(id) : this.#bySerial[serial];
  }

  getByKey(key: string): R | undefined {
    return this.#byKey.get(key);
  }

  /** True when a row with this id existed and was deleted (and has not been re-created). */
  wasDeleted(id: R['id']): boolean {
    return this.#deleted.has(id);
  }

  /**
   * Adds a new row. Its key is indexed unless another row holds it already (competitor single creates);
   * `keyFree` says the caller has just looked the key up and found nothing (saves a lookup on the bulk path).
   */
  insert(row: R, now: number, keyFree = false): void {
    const serial = this.#serialOf(row.id);
    if (serial === null) this.#byId.set(row.id, row);
    else this.#bySerial[serial] = row;
    this.#live += 1;
    if (this.#deleted.size > 0) this.#deleted.delete(row.id);
    if (row.key !== null && (keyFree || !this.#byKey.has(row.key))) this.#byKey.set(row as R & { key: string });
    this.#stamp(row, now);
  }

  /** Records that an existing row was rewritten; `previousKey` is its key before the write. */
  update(row: R, now: number, previousKey: string | null): void {
    if (previousKey !== row.key) {
      if (previousKey !== null) this.#byKey.remove(previousKey, row);
      if (row.key !== null && !this.#byKey.has(row.key)) this.#byKey.set(row as R & { key: string });
    }
    this.#stale += 1;
    this.#stamp(row, now);
  }

  delete(row: R): void {
    const serial = this.#serialOf(row.id);
    if (serial === null) this.#byId.delete(row.id);
    else this.#bySerial[serial] = undefined;
    this.#live -= 1;
    if (row.key !== null) this.#byKey.remove(row.key, row);
    this.#deleted.add(row.id);
    row.seq = 0;
    this.#stale += 1;
    this.#maybeCompact();
  }

  /** Every live row (for state snapshots): issued ids in serial order, then client-chosen ids. */
  *rows(): IterableIterator<R> {
    for (const row of this.#bySerial) if (row !== undefined) yield row;
    yield* this.#byId.values();
  }

  page(request: PageRequest<R>): TablePage<R> {
    let start = request.after === null ? 0 : upperBound(this.#logSeqs, request.after);
    if (request.updatedAfter !== null) start = Math.max(start, lowerBound(this.#logTimes, request.updatedAfter));
    const rows: R[] = [];
    const { filter, limit } = request;
    for (let i = start; i < this.#logRows.length; i += 1) {
      const row = this.#logRows[i]!;
      if (row.seq !== this.#logSeqs[i]) continue; // stale: rewritten later or deleted
      if (filter && !filter(row)) continue;
      if (rows.length === limit) return { rows, nextAfter: rows[rows.length - 1]!.seq };
      rows.push(row);
    }
    return { rows, nextAfter: null };
  }

  /** The serial of an id this table issued, else null. */
  #serialOf(id: R['id']): number | null {
    if (id === this.#lastIssuedId) return this.#issued;
    const serial = this.#codec.decode(id);
    if (serial === null || serial > this.#issued) return null;
    return this.#byId.size > 0 && this.#byId.has(id) ? null : serial;
  }

  #stamp(row: R, now: number): void {
    this.#lastTime = Math.max(this.#lastTime, now);
    this.#seq += 1;
    row.seq = this.#seq;
    row.updatedAt = this.#lastTime;
    this.#logRows.push(row);
    this.#logSeqs.push(this.#seq);
    this.#logTimes.push(this.#lastTime);
    this.#maybeCompact();
  }

  #maybeCompact(): void {
    if (this.#stale < COMPACT_MIN_STALE || this.#stale < this.#byId.size) return;
    const rows: R[] = [];
    const seqs: number[] = [];
    const times: number[] = [];
    for (let i = 0; i < this.#logRows.length; i += 1) {
      const row = this.#logRows[i]!;
      if (row.seq !== this.#logSeqs[i]) continue;
      rows.push(row);
      seqs.push(this.#logSeqs[i]!);
      times.push(this.#logTimes[i]!);
    }
    this.#logRows = rows;
    this.#logSeqs = seqs;
    this.#logTimes = times;
    this.#stale = 0;
  }
}

/** First index whose value is > target (values ascending). */
function upperBound(values: readonly number[], target: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! <= target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index whose value is >= target (values ascending). */
function lowerBound(values: readonly number[], target: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
