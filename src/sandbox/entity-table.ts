/**
 * In-memory storage of one resource: rows by internal id, an index by business key, the ids of deleted rows (so
 * DELETE can tell "already gone" from "never existed"), and a write log that orders rows for listing.
 *
 * Ids. The table issues its own ids (`issueId`) as encodings of a serial (id-codec.ts) and keeps those rows in an
 * array at index = serial; rows with an id chosen by a client (single upsert on a path id) go in a second array,
 * found through a Map. A client id that happens to look like one of ours is still treated as foreign, and the
 * serial behind it is never issued. A row's slot, by which the key index and the write log refer to it, is its
 * serial, or -(1 + its index in the second array).
 *
 * Listing order and cursors. Every write (insert, update) stamps the row with the next write sequence number and
 * appends it to the log; the entry it had before becomes stale and is skipped. A listing walks the log in sequence
 * order and its cursor is the last sequence number returned, so:
 * - rows inserted during a listing appear at its end, never shift a page, never make it skip a row;
 * - a row updated during a listing moves to the end and is returned again: an incremental mirror that stores the
 *   largest `updated_at` it saw can never miss an update (updated_at is monotonic with the sequence).
 *
 * Memory: per row, the row object and its array slot (plus a map entry for a client-chosen id), a key index entry
 * (key-index.ts: integers only) and a log entry (20 bytes in typed arrays); stale log entries are compacted away
 * once they outnumber live rows. Only the row objects are left for the garbage collector to trace.
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
const MIN_LOG = 1024;

export class EntityTable<R extends TableRow> {
  readonly #codec: IdCodec<R['id']>;
  /** Rows with an issued id, at index = serial (index 0 unused: slot 0 means "none"). */
  readonly #bySerial: (R | undefined)[] = [undefined];
  #issued = 0;
  /** The id issueId() returned last: its row is usually inserted next, and then needs no decoding. */
  #lastIssuedId: R['id'] | null = null;
  #live = 0;
  /** Rows with a client-chosen id, in insertion order, and their slots by id. */
  readonly #clientRows: (R | undefined)[] = [];
  readonly #clientSlots = new Map<R['id'], number>();
  readonly #byKey = new KeyIndex((slot) => this.#rowAt(slot)?.key ?? null);
  readonly #deleted = new Set<R['id']>();
  /** The write log: entry i is the write with sequence number #logSeqs[i] of the row in slot #logSlots[i]. */
  #logSlots = new Int32Array(MIN_LOG);
  #logSeqs = new Float64Array(MIN_LOG);
  #logTimes = new Float64Array(MIN_LOG);
  #logLength = 0;
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
      if (this.#clientSlots.size === 0 || !this.#clientSlots.has(id)) {
        this.#lastIssuedId = id;
        return id;
      }
    }
  }

  get deletedCount(): number {
    return this.#deleted.size;
  }

  getById(id: R['id']): R | undefined {
    const slot = this.#slotOf(id);
    return slot === null ? undefined : this.#rowAt(slot);
  }

  getByKey(key: string): R | undefined {
    const slot = this.#byKey.get(key);
    return slot === 0 ? undefined : this.#rowAt(slot);
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
    let slot = this.#slotOf(row.id);
    if (slot === null) {
      slot = -1 - this.#clientRows.length;
      this.#clientRows.push(row);
      this.#clientSlots.set(row.id, slot);
    } else if (slot > 0) this.#bySerial[slot] = row;
    else this.#clientRows[-1 - slot] = row;
    this.#live += 1;
    if (this.#deleted.size > 0) this.#deleted.delete(row.id);
    if (row.key !== null && (keyFree || this.#byKey.get(row.key) === 0)) this.#byKey.set(row.key, slot);
    this.#stamp(row, slot, now);
  }

  /** Records that an existing row was rewritten; `previousKey` is its key before the write. */
  update(row: R, now: number, previousKey: string | null): void {
    const slot = this.#slotOf(row.id)!;
    if (previousKey !== row.key) {
      if (previousKey !== null) this.#byKey.remove(previousKey, slot);
      if (row.key !== null && this.#byKey.get(row.key) === 0) this.#byKey.set(row.key, slot);
    }
    this.#stale += 1;
    this.#stamp(row, slot, now);
  }

  delete(row: R): void {
    const slot = this.#slotOf(row.id)!;
    if (row.key !== null) this.#byKey.remove(row.key, slot);
    if (slot > 0) this.#bySerial[slot] = undefined;
    else {
      this.#clientRows[-1 - slot] = undefined;
      this.#clientSlots.delete(row.id);
    }
    this.#live -= 1;
    this.#deleted.add(row.id);
    row.seq = 0;
    this.#stale += 1;
    this.#maybeCompact();
  }

  /** Every live row (for state snapshots): issued ids in serial order, then client-chosen ids. */
  *rows(): IterableIterator<R> {
    for (const row of this.#bySerial) if (row !== undefined) yield row;
    for (const row of this.#clientRows) if (row !== undefined) yield row;
  }

  page(request: PageRequest<R>): TablePage<R> {
    const length = this.#logLength;
    let start = request.after === null ? 0 : upperBound(this.#logSeqs, length, request.after);
    if (request.updatedAfter !== null) start = Math.max(start, lowerBound(this.#logTimes, length, request.updatedAfter));
    const rows: R[] = [];
    const { filter, limit } = request;
    for (let i = start; i < length; i += 1) {
      const row = this.#rowAt(this.#logSlots[i]!);
      if (row === undefined || row.seq !== this.#logSeqs[i]) continue; // stale: rewritten later or deleted
      if (filter && !filter(row)) continue;
      if (rows.length === limit) return { rows, nextAfter: rows[rows.length - 1]!.seq };
      rows.push(row);
    }
    return { rows, nextAfter: null };
  }

  #rowAt(slot: number): R | undefined {
    return slot > 0 ? this.#bySerial[slot] : this.#clientRows[-1 - slot];
  }

  /** The slot of the row with this id, live or not (null for a client id with no row). */
  #slotOf(id: R['id']): number | null {
    if (id === this.#lastIssuedId) return this.#issued;
    if (this.#clientSlots.size > 0) {
      const slot = this.#clientSlots.get(id);
      if (slot !== undefined) return slot;
    }
    const serial = this.#codec.decode(id);
    return serial === null || serial > this.#issued ? null : serial;
  }

  #stamp(row: R, slot: number, now: number): void {
    this.#lastTime = Math.max(this.#lastTime, now);
    this.#seq += 1;
    row.seq = this.#seq;
    row.updatedAt = this.#lastTime;
    if (this.#logLength === this.#logSlots.length) this.#growLog(this.#logLength * 2);
    const at = this.#logLength;
    this.#logSlots[at] = slot;
    this.#logSeqs[at] = this.#seq;
    this.#logTimes[at] = this.#lastTime;
    this.#logLength = at + 1;
    this.#maybeCompact();
  }

  #growLog(capacity: number): void {
    const slots = new Int32Array(capacity);
    const seqs = new Float64Array(capacity);
    const times = new Float64Array(capacity);
    slots.set(this.#logSlots.subarray(0, this.#logLength));
    seqs.set(this.#logSeqs.subarray(0, this.#logLength));
    times.set(this.#logTimes.subarray(0, this.#logLength));
    this.#logSlots = slots;
    this.#logSeqs = seqs;
    this.#logTimes = times;
  }

  #maybeCompact(): void {
    if (this.#stale < COMPACT_MIN_STALE || this.#stale < this.#live) return;
    let kept = 0;
    for (let i = 0; i < this.#logLength; i += 1) {
      const row = this.#rowAt(this.#logSlots[i]!);
      if (row === undefined || row.seq !== this.#logSeqs[i]) continue;
      this.#logSlots[kept] = this.#logSlots[i]!;
      this.#logSeqs[kept] = this.#logSeqs[i]!;
      this.#logTimes[kept] = this.#logTimes[i]!;
      kept += 1;
    }
    this.#logLength = kept;
    this.#stale = 0;
    if (kept * 4 < this.#logSlots.length && this.#logSlots.length > MIN_LOG) this.#growLog(Math.max(MIN_LOG, kept * 2));
  }
}

/** First index below `length` whose value is > target (values ascending). */
function upperBound(values: Float64Array, length: number, target: number): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! <= target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index below `length` whose value is >= target (values ascending). */
function lowerBound(values: Float64Array, length: number, target: number): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
