/**
 * A file's rows as (key hash, line, ...) entries in key-hash order, in bounded memory whatever the file's size: an
 * external sort. Entries are collected in fixed typed arrays of RUN_ENTRIES; a full buffer is sorted (a stable radix
 * sort on the 64-bit key hash, so rows of one key stay in file order) and written to a run file in `dir`; reading
 * merges the runs. Memory: one buffer (about 2 MiB) while writing, one block per run and one output block while
 * reading.
 *
 * No object per entry (a file of millions of rows made the garbage collector the comparison's largest cost): entries
 * go in as numbers and come out in blocks of columns (EntryBlock), reused from one block to the next.
 *
 * Entry layout in a run file (ENTRY_BYTES, the host's byte order: a run is written and read by the same process): key
 * hash high, key hash low, content hash high, content hash low, line (unsigned 32-bit each), a spare word, price
 * (float64, NaN when none).
 */
import { open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

export const RUN_ENTRIES = 1 << 16;
const ENTRY_BYTES = 32;
/** 32-bit words per entry, and the float64 slot of the price within an entry. */
const WORDS = ENTRY_BYTES / 4;
const PRICE_SLOT = 3;
const BLOCK_ENTRIES = 2048;

/** Up to BLOCK_ENTRIES merged entries, in (key hash, line) order, as columns; `size` of them are set. */
export class EntryBlock {
  size = 0;
  readonly keyHi = new Uint32Array(BLOCK_ENTRIES);
  readonly keyLo = new Uint32Array(BLOCK_ENTRIES);
  readonly contentHi = new Uint32Array(BLOCK_ENTRIES);
  readonly contentLo = new Uint32Array(BLOCK_ENTRIES);
  readonly line = new Uint32Array(BLOCK_ENTRIES);
  /** NaN: no price. */
  readonly price = new Float64Array(BLOCK_ENTRIES);
}

/** Entries as laid out in a run file: `words` (32-bit) and `prices` (float64) views of one buffer. */
class Entries {
  readonly bytes: Uint8Array;
  readonly words: Uint32Array;
  readonly prices: Float64Array;

  constructor(capacity: number) {
    const buffer = new ArrayBuffer(capacity * ENTRY_BYTES);
    this.bytes = new Uint8Array(buffer);
    this.words = new Uint32Array(buffer);
    this.prices = new Float64Array(buffer);
  }
}

/**
 * The order of the first `size` entries by signed 64-bit key hash, stable (entries of one key stay in file order): a
 * stable LSD radix sort on the high half (two passes of 16 bits, its sign bit flipped for signed order), then the runs
 * of equal high halves sorted by the low half, stably. Such runs are entries of one key, already in order, or of keys
 * sharing 32 bits of their hash, a pair or so in a run of 65,536 entries: the two passes on the low half that a
 * radix sort on all 64 bits takes cost the first pass more (half of its sort) than these few.
 */
function sortedOrder(words: Uint32Array, size: number): Uint32Array {
  let order = new Uint32Array(size);
  for (let i = 0; i < size; i++) order[i] = i;
  let next = new Uint32Array(size);
  const counts = new Uint32Array(65537);
  for (const { shift, flip } of [
    { shift: 0, flip: 0 },
    { shift: 16, flip: 0x8000 },
  ]) {
    counts.fill(0);
    for (let j = 0; j < size; j++) (counts[((((words[(order[j] as number) * WORDS] as number) >>> shift) & 0xffff) ^ flip) + 1] as number)++;
    for (let d = 0; d < 65536; d++) counts[d + 1] = (counts[d + 1] as number) + (counts[d] as number);
    for (let j = 0; j < size; j++) {
      const i = order[j] as number;
      const d = (((words[i * WORDS] as number) >>> shift) & 0xffff) ^ flip;
      next[counts[d] as number] = i;
      counts[d] = (counts[d] as number) + 1;
    }
    [order, next] = [next, order];
  }
  // Equal high halves: an insertion sort by the low half (unsigned), moving an entry only past larger ones (stable).
  for (let j = 1; j < size; j++) {
    const i = order[j] as number;
    const hi = words[i * WORDS] as number;
    const lo = words[i * WORDS + 1] as number;
    let k = j - 1;
    while (k >= 0) {
      const other = order[k] as number;
      if ((words[other * WORDS] as number) !== hi || (words[other * WORDS + 1] as number) <= lo) break;
      order[k + 1] = other;
      k--;
    }
    order[k + 1] = i;
  }
  return order;
}

/** The buffer's first `size` entries in sorted order, in a new buffer of the same layout. */
function sortedCopy(from: Entries, size: number): Entries {
  const order = sortedOrder(from.words, size);
  const to = new Entries(size);
  const source = from.words;
  const target = to.words;
  for (let j = 0; j < size; j++) {
    const a = (order[j] as number) * WORDS;
    const b = j * WORDS;
    for (let w = 0; w < WORDS; w++) target[b + w] = source[a + w] as number;
  }
  return to;
}

/** Collects entries; `blocks()` reads all of them back in (key hash, line) order. */
const TWO_32 = 4294967296;

/**
 * In line mode an entry's content words carry its line's byte offset in the file instead (a line read as bytes:
 * line-scan.ts), 0 where it is not known (a line the reader read): the high word of an offset.
 */
export function offsetHi(offset: number): number {
  return Math.floor(offset / TWO_32);
}

/** The byte offset an entry's content words carry in line mode (offsetHi), 0: not known. */
export function offsetOf(hi: number, lo: number): number {
  return hi * TWO_32 + (lo >>> 0);
}

export class SortedRuns {
  readonly #dir: string;
  readonly #capacity: number;
  readonly #buffer: Entries;
  readonly #prefix: string;
  readonly #runs: RunFile[] = [];
  /** Runs of this collection's own (the others were adopted). */
  #written = 0;
  #size = 0;
  #count = 0;
  /** The last run's write, still going while the next run fills (null: none yet). */
  #writing: Promise<void> | null = null;

  /**
   * `runEntries`: entries per run (tests use small runs to exercise the merge). `prefix`: the run files' names in
   * `dir` (two collections writing to one folder, the two halves of a file, use two).
   */
  constructor(dir: string, runEntries = RUN_ENTRIES, prefix = 'run') {
    this.#dir = dir;
    this.#capacity = runEntries;
    this.#buffer = new Entries(runEntries);
    this.#prefix = prefix;
  }

  get count(): number {
    return this.#count;
  }

  /**
   * Writes what is still in memory as a run and hands every run file over to the caller (another thread's
   * collection adopts them); this collection is then empty and forgets them.
   */
  async handOver(): Promise<{ readonly paths: string[]; readonly count: number }> {
    if (this.#size > 0) await this.#spill();
    await this.#writing;
    const paths = this.#runs.splice(0).map((r) => r.path);
    const count = this.#count;
    this.#count = 0;
    return { paths, count };
  }

  /**
   * Takes over sorted run files written by another collection (`handOver`), of `count` entries, whose lines are
   * counted from `lineBase` + 1: each of their lines is read as `lineBase` more. Removed with this collection's own.
   */
  adopt(paths: readonly string[], count: number, lineBase: number): void {
    for (const path of paths) this.#runs.push({ path, lineBase });
    this.#count += count;
  }

  /**
   * Adds an entry (`price`: NaN for none). Returns null, or, when the buffer just filled up, a promise to await before
   * the next `add` (one per run, not per entry): the run is sorted at once and written while the next one fills; the
   * promise is the write of the run before it (usually long done), so at most two runs are in memory.
   */
  add(keyHi: number, keyLo: number, contentHi: number, contentLo: number, line: number, price: number): Promise<void> | null {
    const i = this.#size;
    const words = this.#buffer.words;
    const at = i * WORDS;
    words[at] = keyHi;
    words[at + 1] = keyLo;
    words[at + 2] = contentHi;
    words[at + 3] = contentLo;
    words[at + 4] = line;
    this.#buffer.prices[i * (WORDS / 2) + PRICE_SLOT] = price;
    this.#size = i + 1;
    this.#count += 1;
    return this.#size === this.#capacity ? this.#spill() : null;
  }

  /** Sorts the buffer into a run and starts writing it; resolves when the previous run's write is done. */
  #spill(): Promise<void> {
    // The buffer is free again as soon as it is copied.
    const sorted = sortedCopy(this.#buffer, this.#size);
    this.#size = 0;
    const path = join(this.#dir, `${this.#prefix}-${this.#written++}`);
    this.#runs.push({ path, lineBase: 0 });
    const previous = this.#writing ?? Promise.resolve();
    const writing = previous.then(() => writeRun(path, sorted));
    // Awaited by the next spill or by blocks(); until then a failed write must not count as unhandled.
    writing.catch(() => undefined);
    this.#writing = writing;
    return previous;
  }

  /**
   * Every run file, once what is still in memory is written as one: for merges of one half of the key range each
   * (mergeRuns), on two threads. The files stay until `remove`. Null when there is nothing to merge from files (no
   * run was written: the entries are few and in memory; read them with `blocks`).
   */
  async files(): Promise<readonly RunFile[] | null> {
    if (this.#runs.length === 0) return null;
    if (this.#size > 0) await this.#spill();
    await this.#writing;
    return [...this.#runs];
  }

  /**
   * Every entry in order, a block at a time (the same EntryBlock, refilled: read it before asking for the next). The
   * run files are removed when the iteration ends (or is abandoned).
   */
  async *blocks(): AsyncGenerator<EntryBlock> {
    const sources: Run[] = [];
    try {
      if (this.#runs.length === 0) {
        const sorted = sortedCopy(this.#buffer, this.#size);
        sources.push(new Run(sorted, this.#size, null));
      } else {
        if (this.#size > 0) await this.#spill();
        await this.#writing;
        for (const run of this.#runs) sources.push(await Run.open(run, 'all'));
      }
      yield* merge(sources);
    } finally {
      for (const s of sources) await s.close();
      await this.remove();
    }
  }

  async remove(): Promise<void> {
    for (const run of this.#runs.splice(0)) await rm(run.path, { force: true });
  }
}

/** A sorted run on disk. */
export interface RunFile {
  readonly path: string;
  /** Added to every line of the run when it is read (adopted runs: their half's first line - 1). */
  readonly lineBase: number;
}

/**
 * Which entries a merge reads: all, or one half of the key range, as signed 64-bit key hashes sort (`negative`: below
 * 0, then `nonNegative`). Key hashes are uniform, so each half holds about half the entries.
 */
export type KeyHalf = 'all' | 'negative' | 'nonNegative';

/**
 * The entries of `half` of the key range in every run file, merged in order, a block at a time (as `blocks`). The
 * files are left as they are: two merges, one per half, may read them at once (one on each thread).
 */
export async function* mergeRuns(files: readonly RunFile[], half: KeyHalf): AsyncGenerator<EntryBlock> {
  const sources: Run[] = [];
  try {
    // Opened at once: each open reads a block and, for a half, binary-searches the file (a read per step).
    const opened = await Promise.allSettled(files.map((file) => Run.open(file, half)));
    for (const result of opened) if (result.status === 'fulfilled') sources.push(result.value);
    const failed = opened.find((result) => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    yield* merge(sources);
  } finally {
    for (const s of sources) await s.close();
  }
}

/** The index of a run file's first entry with a non-negative key hash (binary search, a 4-byte read a step). */
async function firstNonNegative(handle: FileHandle, entries: number): Promise<number> {
  const word = Buffer.alloc(4);
  let low = 0;
  let high = entries;
  while (low < high) {
    const mid = (low + high) >>> 1;
    await handle.read(word, 0, 4, mid * ENTRY_BYTES);
    // The key hash's high word in the host's byte order (the run's), as a signed number.
    if (new Int32Array(word.buffer, word.byteOffset, 1)[0] as number < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

async function writeRun(path: string, sorted: Entries): Promise<void> {
  const handle = await open(path, 'w', 0o600);
  try {
    await handle.write(sorted.bytes);
  } finally {
    await handle.close();
  }
}

/**
 * One sorted sequence being merged: a block of its entries in memory, `at` the current one. A run read from a file
 * reads its next block while this one is merged (two blocks a run), so the merge seldom waits for the disk.
 */
class Run {
  entries: Entries;
  /** Entries in the block; `at` === `filled` once the block is used up. */
  filled: number;
  at = 0;
  readonly #handle: FileHandle | null;
  readonly #lineBase: number;
  #position = 0;
  /** Where the run's part to read ends (bytes), for a run read from a file. */
  #end = 0;
  #spare: Entries | null = null;
  /** The next block being read into #spare: its entry count. */
  #next: Promise<number> | null = null;

  constructor(entries: Entries, filled: number, handle: FileHandle | null, lineBase = 0) {
    this.entries = entries;
    this.filled = filled;
    this.#handle = handle;
    this.#lineBase = lineBase;
  }

  /** The entries of `half` of the key range in a run file. */
  static async open(file: RunFile, half: KeyHalf): Promise<Run> {
    const handle = await open(file.path, 'r');
    const run = new Run(new Entries(BLOCK_ENTRIES), 0, handle, file.lineBase);
    try {
      const entries = Math.floor((await handle.stat()).size / ENTRY_BYTES);
      const split = half === 'all' ? 0 : await firstNonNegative(handle, entries);
      run.#position = (half === 'nonNegative' ? split : 0) * ENTRY_BYTES;
      run.#end = (half === 'negative' ? split : entries) * ENTRY_BYTES;
      run.#spare = new Entries(BLOCK_ENTRIES);
      run.#prefetch();
      await run.load();
    } catch (error) {
      await run.close();
      throw error;
    }
    return run;
  }

  #prefetch(): void {
    const handle = this.#handle;
    const spare = this.#spare;
    if (handle === null || spare === null) return;
    const position = this.#position;
    const length = Math.max(0, Math.min(spare.bytes.length, this.#end - position));
    this.#position += length;
    this.#next = length === 0 ? Promise.resolve(0) : handle.read(spare.bytes, 0, length, position).then(({ bytesRead }) => Math.floor(bytesRead / ENTRY_BYTES));
    // Awaited by load() or dropped by close(): a failed read must not count as unhandled meanwhile.
    this.#next.catch(() => undefined);
  }

  /** Moves to the next block (none left: `filled` is 0). */
  async load(): Promise<void> {
    this.at = 0;
    this.filled = 0;
    if (this.#next === null) return;
    const filled = await this.#next;
    this.#next = null;
    if (filled === 0) return;
    const current = this.entries;
    this.entries = this.#spare as Entries;
    this.#spare = current;
    this.filled = filled;
    if (this.#lineBase !== 0) {
      const words = this.entries.words;
      for (let i = 0; i < filled; i++) words[i * WORDS + 4] = (words[i * WORDS + 4] as number) + this.#lineBase;
    }
    this.#prefetch();
  }

  async close(): Promise<void> {
    // A read still going is waited for: the handle is not closed under it.
    await this.#next?.catch(() => undefined);
    await this.#handle?.close();
  }
}

/** Orders two runs' current entries by (signed 64-bit key hash, line). */
function before(a: Run, b: Run): boolean {
  const aw = a.entries.words;
  const bw = b.entries.words;
  const ai = a.at * WORDS;
  const bi = b.at * WORDS;
  const ah = (aw[ai] as number) | 0;
  const bh = (bw[bi] as number) | 0;
  if (ah !== bh) return ah < bh;
  const al = aw[ai + 1] as number;
  const bl = bw[bi + 1] as number;
  if (al !== bl) return al < bl;
  return (aw[ai + 4] as number) < (bw[bi + 4] as number);
}

/** A k-way merge with a binary heap of the runs, by their current entries; yields full blocks, then the rest. */
async function* merge(sources: Run[]): AsyncGenerator<EntryBlock> {
  const heap = sources.filter((s) => s.at < s.filled);
  const down = (start: number): void => {
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && before(heap[l] as Run, heap[m] as Run)) m = l;
      if (r < heap.length && before(heap[r] as Run, heap[m] as Run)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m] as Run, heap[i] as Run];
      i = m;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
  const out = new EntryBlock();
  while (heap.length > 0) {
    const top = heap[0] as Run;
    const words = top.entries.words;
    const w = top.at * WORDS;
    const o = out.size;
    out.keyHi[o] = words[w] as number;
    out.keyLo[o] = words[w + 1] as number;
    out.contentHi[o] = words[w + 2] as number;
    out.contentLo[o] = words[w + 3] as number;
    out.line[o] = words[w + 4] as number;
    out.price[o] = top.entries.prices[top.at * (WORDS / 2) + PRICE_SLOT] as number;
    out.size = o + 1;
    top.at += 1;
    if (top.at === top.filled) {
      await top.load();
      if (top.filled === 0) {
        const last = heap.pop() as Run;
        if (heap.length > 0 && last !== top) heap[0] = last;
      }
    }
    if (heap.length > 0) down(0);
    if (out.size === BLOCK_ENTRIES) {
      yield out;
      out.size = 0;
    }
  }
  if (out.size > 0) yield out;
}
