/**
 * In-memory storage of one resource: rows by internal id, an index by business key, the ids of deleted rows (so
 * DELETE can tell "already gone" from "never existed"), and a write log that orders rows for listing.
 *
 * Ids and slots. The table issues its own ids (`issueId`) as encodings of a serial (id-codec.ts), so it finds
 * those rows by decoding the id; rows with an id chosen by a client (single upsert on a path id) are found through
 * a Map. A client id that happens to look like one of ours is still treated as foreign, and the serial behind it
 * is never issued. Every row also has a slot (1, 2, 3, ... in insertion order), by which the key index, the write
 * log and the row store refer to it.
 *
 * Rows live in a RowStore: by default the row objects themselves (ObjectStore); transactions keep their fields in
 * columns and hand out a new row object on every read (transactions.ts). Either way a row read, changed and
 * passed to update() is stored.
 *
 * Listing order and cursors. Every write (insert, update) stamps the row with the next write sequence number and
 * appends it to the log; the entry it had before becomes stale and is skipped. A listing walks the log in sequence
 * order and its cursor is the last sequence number returned, so:
 * - rows inserted during a listing appear at its end, never shift a page, never make it skip a row;
 * - a row updated during a listing moves to the end and is returned again: an incremental mirror that stores the
 *   largest `updated_at` it saw can never miss an update (updated_at is monotonic with the sequence).
 *
 * Memory: per row, what its store keeps (the row object and an array slot, for ObjectStore), a key index entry
 * (key-index.ts: integers only) and a log entry (20 bytes in typed arrays), plus a map entry for a client-chosen
 * id; stale log entries are compacted away once they outnumber live rows.
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

/** Where a table keeps the fields of its rows, by slot. */
export interface RowStore<R extends TableRow> {
  /** Keeps the fields of `row` (seq and updatedAt included) in `slot`: a new row, or a rewrite of the row there. */
  save(slot: number, row: R): void;
  /**
   * The row in `slot`, with this id; undefined when the slot is empty. The object kept, or a new one each time:
   * changes to it are kept once it is saved again.
   */
  load(slot: number, id: R['id']): R | undefined;
  /** True when the row in `slot` has this business key. */
  hasKey(slot: number, key: string): boolean;
  /** The write sequence number of the row in `slot`; 0 when the slot is empty. */
  seqAt(slot: number): number;
  /** Empties `slot` (its row was deleted). */
  clear(slot: number): void;
}

/** The rows themselves, in an array by slot. */
export class ObjectStore<R extends TableRow> implements RowStore<R> {
  readonly #rows: (R | undefined)[] = [undefined];

  save(slot: number, row: R): void {
    while (this.#rows.length < slot) this.#rows.push(undefined);
    this.#rows[slot] = row;
  }

  load(slot: number): R | undefined {
    return this.#rows[slot];
  }

  hasKey(slot: number, key: string): boolean {
    return this.#rows[slot]?.key === key;
  }

  seqAt(slot: number): number {
    return this.#rows[slot]?.seq ?? 0;
  }

  clear(slot: number): void {
    this.#rows[slot] = undefined;
  }
}

const COMPACT_MIN_STALE = 4096;
const MIN_LOG = 1024;
const MIN_SLOTS = 1024;

/** A copy of `array` long enough to hold index `needed` (lengths grow by half). */
function grown(array: Int32Array<ArrayBuffer>, needed: number): Int32Array<ArrayBuffer> {
  const capacity = Math.max(MIN_SLOTS, needed + 1, Math.ceil(array.length * 1.5));
  const copy = new Int32Array(capacity);
  copy.set(array);
  return copy;
}

export class EntityTable<R extends TableRow> {
  readonly #codec: IdCodec<R['id']>;
  readonly #store: RowStore<R>;
  /** The last serial issued. */
  #issued = 0;
  /** The id issueId() returned last and its serial: its row is usually inserted next, and then needs no decoding. */
  #lastIssuedId: R['id'] | null = null;
  #lastIssuedSerial = 0;
  /** The last slot given to a row. */
  #slots = 0;
  /**
   * True while every row has an issued id and took the slot equal to its serial (rows inserted in the order their
   * ids were issued: the bulk path). The two maps below are then left empty.
   */
  #identity = true;
  /** Slot of each issued serial (0: none yet), and serial of each slot (0: a client id). */
  #slotOfSerial = new Int32Array(0);
  #serialOfSlot = new Int32Array(0);
  #live = 0;
  /** Live rows with a client-chosen id: slot by id, and id by slot in insertion order (rows() lists them last). */
  readonly #clientSlots = new Map<R['id'], number>();
  readonly #clientIds = new Map<number, R['id']>();
  readonly #byKey: KeyIndex;
  readonly #deleted = new Set<R['id']>();
  /** The write log: entry i is the write with sequence number #logSeqs[i] of the row in slot #logSlots[i]. */
  #logSlots = new Int32Array(MIN_LOG);
  #logSeqs = new Float64Array(MIN_LOG);
  #logTimes = new Float64Array(MIN_LOG);
  #logLength = 0;
  #seq = 0;
  #stale = 0;
  #lastTime = 0;

  constructor(codec: IdCodec<R['id']>, store: RowStore<R> = new ObjectStore<R>()) {
    this.#codec = codec;
    this.#store = store;
    this.#byKey = new KeyIndex((slot, key) => store.hasKey(slot, key));
  }

  get size(): number {
    return this.#live;
  }

  /** A new internal id, never used before in this table. */
  issueId(): R['id'] {
    for (;;) {
      this.#issued += 1;
      const id = this.#codec.encode(this.#issued);
      if (this.#clientSlots.size === 0 || !this.#clientSlots.has(id)) {
        this.#lastIssuedId = id;
        this.#lastIssuedSerial = this.#issued;
        return id;
      }
    }
  }

  get deletedCount(): number {
    return this.#deleted.size;
  }

  getById(id: R['id']): R | undefined {
    const slot = this.#slotOf(id);
    return slot === 0 || this.#store.seqAt(slot) === 0 ? undefined : this.#store.load(slot, id);
  }

  getByKey(key: string): R | undefined {
    const slot = this.#byKey.get(key);
    return slot === 0 ? undefined : this.#store.load(slot, this.#idOf(slot));
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
    if (this.#identity && (serial === 0 || serial > this.#slots + 1)) this.#leaveIdentity();
    let slot = this.#slotOf(row.id, serial);
    if (slot === 0) {
      slot = this.#newSlot(serial);
      if (serial === 0) {
        this.#clientSlots.set(row.id, slot);
        this.#clientIds.set(slot, row.id);
      } else this.#slotOfSerial[serial] = slot;
    }
    this.#live += 1;
    if (this.#deleted.size > 0) this.#deleted.delete(row.id);
    if (row.key !== null && (keyFree || this.#byKey.get(row.key) === 0)) this.#byKey.set(row.key, slot);
    this.#stamp(row, slot, now);
  }

  /** Records that an existing row was rewritten; `previousKey` is its key before the write. */
  update(row: R, now: number, previousKey: string | null): void {
    const slot = this.#slotOf(row.id);
    if (previousKey !== row.key) {
      if (previousKey !== null) this.#byKey.remove(previousKey, slot);
      if (row.key !== null && this.#byKey.get(row.key) === 0) this.#byKey.set(row.key, slot);
    }
    this.#stale += 1;
    this.#stamp(row, slot, now);
  }

  delete(row: R): void {
    const slot = this.#slotOf(row.id);
    if (row.key !== null) this.#byKey.remove(row.key, slot);
    this.#store.clear(slot);
    if (this.#clientIds.size > 0 && this.#clientIds.delete(slot)) this.#clientSlots.delete(row.id);
    this.#live -= 1;
    this.#deleted.add(row.id);
    row.seq = 0;
    this.#stale += 1;
    this.#maybeCompact();
  }

  /** Every live row (for state snapshots): issued ids in serial order, then client-chosen ids. */
  *rows(): IterableIterator<R> {
    const slots = this.#identity ? this.#slots : Math.min(this.#issued, this.#slotOfSerial.length - 1);
    for (let serial = 1; serial <= slots; serial += 1) {
      const slot = this.#identity ? serial : this.#slotOfSerial[serial]!;
      if (slot === 0 || this.#store.seqAt(slot) === 0) continue;
      const row = this.#store.load(slot, this.#codec.encode(serial));
      if (row !== undefined) yield row;
    }
    for (const [slot, id] of this.#clientIds) {
      const row = this.#store.load(slot, id);
      if (row !== undefined) yield row;
    }
  }

  page(request: PageRequest<R>): TablePage<R> {
    const length = this.#logLength;
    let start = request.after === null ? 0 : upperBound(this.#logSeqs, length, request.after);
    if (request.updatedAfter !== null) start = Math.max(start, lowerBound(this.#logTimes, length, request.updatedAfter));
    const rows: R[] = [];
    const { filter, limit } = request;
    for (let i = start; i < length; i += 1) {
      const slot = this.#logSlots[i]!;
      if (this.#store.seqAt(slot) !== this.#logSeqs[i]) continue; // stale: rewritten later or deleted
      const row = this.#store.load(slot, this.#idOf(slot))!;
      if (filter && !filter(row)) continue;
      if (rows.length === limit) return { rows, nextAfter: rows[rows.length - 1]!.seq };
      rows.push(row);
    }
    return { rows, nextAfter: null };
  }

  #idOf(slot: number): R['id'] {
    if (this.#identity) return this.#codec.encode(slot);
    const serial = this.#serialOfSlot[slot]!;
    return serial === 0 ? this.#clientIds.get(slot)! : this.#codec.encode(serial);
  }

  /** The serial behind an id this table issued; 0 for any other id (a client's). */
  #serialOf(id: R['id']): number {
    if (id === this.#lastIssuedId) return this.#lastIssuedSerial;
    if (this.#clientSlots.size > 0 && this.#clientSlots.has(id)) return 0;
    const serial = this.#codec.decode(id);
    return serial === null || serial > this.#issued ? 0 : serial;
  }

  /** The slot of the row with this id (live or deleted), or 0 when there has been none. */
  #slotOf(id: R['id'], serial = this.#serialOf(id)): number {
    if (this.#identity) return serial <= this.#slots ? serial : 0;
    if (serial !== 0) return serial < this.#slotOfSerial.length ? this.#slotOfSerial[serial]! : 0;
    return this.#clientSlots.get(id) ?? 0;
  }

  #newSlot(serial: number): number {
    this.#slots += 1;
    const slot = this.#slots;
    if (this.#identity) return slot; // === serial
    if (slot >= this.#serialOfSlot.length) this.#serialOfSlot = grown(this.#serialOfSlot, slot);
    if (serial >= this.#slotOfSerial.length) this.#slotOfSerial = grown(this.#slotOfSerial, serial);
    this.#serialOfSlot[slot] = serial;
    return slot;
  }

  /** Writes the identity mapping out into the two maps, before a row takes a slot other than its serial. */
  #leaveIdentity(): void {
    this.#identity = false;
    this.#slotOfSerial = grown(this.#slotOfSerial, this.#slots);
    this.#serialOfSlot = grown(this.#serialOfSlot, this.#slots);
    for (let slot = 1; slot <= this.#slots; slot += 1) {
      this.#slotOfSerial[slot] = slot;
      this.#serialOfSlot[slot] = slot;
    }
  }

  #stamp(row: R, slot: number, now: number): void {
    this.#lastTime = Math.max(this.#lastTime, now);
    this.#seq += 1;
    row.seq = this.#seq;
    row.updatedAt = this.#lastTime;
    this.#store.save(slot, row);
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
      if (this.#store.seqAt(this.#logSlots[i]!) !== this.#logSeqs[i]) continue;
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
