/**
 * A file's rows as (key hash, line, ...) entries in key-hash order, in bounded memory whatever the file's size: an
 * external sort. Entries are collected in fixed typed arrays of RUN_ENTRIES; a full buffer is sorted (a stable radix
 * sort on the 64-bit key hash, so rows of one key stay in file order) and written to a run file in `dir`; reading
 * merges the runs. Memory: one buffer (about 2 MiB) while writing, one block per run while reading.
 *
 * Entry layout in a run file (little-endian, ENTRY_BYTES): key hash high, key hash low, key check, content hash
 * high, content hash low, line (unsigned 32-bit each), price (float64, NaN when none).
 */
import { open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { compareHashes } from './hash.ts';

export const RUN_ENTRIES = 1 << 16;
const ENTRY_BYTES = 32;
const BLOCK_ENTRIES = 2048;

export interface RunEntry {
  keyHi: number;
  keyLo: number;
  check: number;
  contentHi: number;
  contentLo: number;
  line: number;
  /** NaN: no price. */
  price: number;
}

class Buffered {
  readonly capacity: number;
  readonly keyHi: Uint32Array;
  readonly keyLo: Uint32Array;
  readonly check: Uint32Array;
  readonly contentHi: Uint32Array;
  readonly contentLo: Uint32Array;
  readonly line: Uint32Array;
  readonly price: Float64Array;
  size = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
    this.keyHi = new Uint32Array(capacity);
    this.keyLo = new Uint32Array(capacity);
    this.check = new Uint32Array(capacity);
    this.contentHi = new Uint32Array(capacity);
    this.contentLo = new Uint32Array(capacity);
    this.line = new Uint32Array(capacity);
    this.price = new Float64Array(capacity);
  }
}

/** Stable LSD radix sort of the buffer's first `size` entries by signed 64-bit key hash: the order of indices. */
function sortedOrder(b: Buffered): Uint32Array {
  let order = new Uint32Array(b.size);
  for (let i = 0; i < b.size; i++) order[i] = i;
  let next = new Uint32Array(b.size);
  const counts = new Uint32Array(65537);
  const digits: ((i: number) => number)[] = [
    (i) => (b.keyLo[i] as number) & 0xffff,
    (i) => (b.keyLo[i] as number) >>> 16,
    (i) => (b.keyHi[i] as number) & 0xffff,
    (i) => ((b.keyHi[i] as number) >>> 16) ^ 0x8000, // the sign bit flipped: signed order
  ];
  for (const digit of digits) {
    counts.fill(0);
    for (let j = 0; j < b.size; j++) (counts[digit(order[j] as number) + 1] as number)++;
    for (let d = 0; d < 65536; d++) counts[d + 1] = (counts[d + 1] as number) + (counts[d] as number);
    for (let j = 0; j < b.size; j++) {
      const i = order[j] as number;
      const d = digit(i);
      next[counts[d] as number] = i;
      counts[d] = (counts[d] as number) + 1;
    }
    [order, next] = [next, order];
  }
  return order;
}

/** Collects entries; `finish()` returns a reader over all of them in (key hash, line) order. */
export class SortedRuns {
  readonly #dir: string;
  readonly #buffer: Buffered;
  readonly #runs: string[] = [];
  #count = 0;

  /** `runEntries`: entries per run (tests use small runs to exercise the merge). */
  constructor(dir: string, runEntries = RUN_ENTRIES) {
    this.#dir = dir;
    this.#buffer = new Buffered(runEntries);
  }

  get count(): number {
    return this.#count;
  }

  async add(e: RunEntry): Promise<void> {
    const b = this.#buffer;
    const i = b.size;
    b.keyHi[i] = e.keyHi;
    b.keyLo[i] = e.keyLo;
    b.check[i] = e.check;
    b.contentHi[i] = e.contentHi;
    b.contentLo[i] = e.contentLo;
    b.line[i] = e.line;
    b.price[i] = e.price;
    b.size += 1;
    this.#count += 1;
    if (b.size === b.capacity) await this.#spill();
  }

  /** Every entry in order; the run files are removed when the iteration ends (or is abandoned). */
  async *entries(): AsyncGenerator<RunEntry> {
    const sources: Source[] = [];
    try {
      if (this.#runs.length === 0) {
        sources.push(memorySource(this.#buffer, sortedOrder(this.#buffer)));
      } else {
        if (this.#buffer.size > 0) await this.#spill();
        for (const path of this.#runs) sources.push(await fileSource(path));
      }
      yield* merge(sources);
    } finally {
      for (const s of sources) await s.close();
      await this.remove();
    }
  }

  async remove(): Promise<void> {
    for (const path of this.#runs.splice(0)) await rm(path, { force: true });
  }

  async #spill(): Promise<void> {
    const b = this.#buffer;
    const order = sortedOrder(b);
    const bytes = Buffer.allocUnsafe(b.size * ENTRY_BYTES);
    for (let j = 0; j < b.size; j++) {
      const i = order[j] as number;
      const at = j * ENTRY_BYTES;
      bytes.writeUInt32LE(b.keyHi[i] as number, at);
      bytes.writeUInt32LE(b.keyLo[i] as number, at + 4);
      bytes.writeUInt32LE(b.check[i] as number, at + 8);
      bytes.writeUInt32LE(b.contentHi[i] as number, at + 12);
      bytes.writeUInt32LE(b.contentLo[i] as number, at + 16);
      bytes.writeUInt32LE(b.line[i] as number, at + 20);
      bytes.writeDoubleLE(b.price[i] as number, at + 24);
    }
    const path = join(this.#dir, `run-${this.#runs.length}`);
    const handle = await open(path, 'w', 0o600);
    try {
      await handle.write(bytes);
    } finally {
      await handle.close();
    }
    this.#runs.push(path);
    b.size = 0;
  }
}

/** One sorted sequence being merged: its current entry, or null at its end. */
interface Source {
  current: RunEntry | null;
  advance(): Promise<void>;
  close(): Promise<void>;
}

function memorySource(b: Buffered, order: Uint32Array): Source {
  let j = 0;
  const at = (k: number): RunEntry | null => {
    if (k >= order.length) return null;
    const i = order[k] as number;
    return {
      keyHi: b.keyHi[i] as number,
      keyLo: b.keyLo[i] as number,
      check: b.check[i] as number,
      contentHi: b.contentHi[i] as number,
      contentLo: b.contentLo[i] as number,
      line: b.line[i] as number,
      price: b.price[i] as number,
    };
  };
  const source: Source = {
    current: at(0),
    advance: () => {
      j += 1;
      source.current = at(j);
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
  return source;
}

async function fileSource(path: string): Promise<Source> {
  const handle: FileHandle = await open(path, 'r');
  const block = Buffer.allocUnsafe(BLOCK_ENTRIES * ENTRY_BYTES);
  let position = 0;
  let filled = 0;
  let offset = 0;
  const load = async (): Promise<void> => {
    const { bytesRead } = await handle.read(block, 0, block.length, position);
    position += bytesRead;
    filled = bytesRead;
    offset = 0;
  };
  const read = (): RunEntry | null => {
    if (offset + ENTRY_BYTES > filled) return null;
    const e = {
      keyHi: block.readUInt32LE(offset),
      keyLo: block.readUInt32LE(offset + 4),
      check: block.readUInt32LE(offset + 8),
      contentHi: block.readUInt32LE(offset + 12),
      contentLo: block.readUInt32LE(offset + 16),
      line: block.readUInt32LE(offset + 20),
      price: block.readDoubleLE(offset + 24),
    };
    offset += ENTRY_BYTES;
    return e;
  };
  await load();
  const source: Source = {
    current: read(),
    async advance() {
      let e = read();
      if (e === null) {
        await load();
        e = read();
      }
      source.current = e;
    },
    close: () => handle.close(),
  };
  return source;
}

function before(a: RunEntry, b: RunEntry): boolean {
  const c = compareHashes(a.keyHi, a.keyLo, b.keyHi, b.keyLo);
  return c < 0 || (c === 0 && a.line < b.line);
}

/** A k-way merge with a binary heap of the sources' current entries. */
async function* merge(sources: Source[]): AsyncGenerator<RunEntry> {
  const heap = sources.filter((s) => s.current !== null);
  const less = (i: number, j: number) => before((heap[i] as Source).current as RunEntry, (heap[j] as Source).current as RunEntry);
  const swap = (i: number, j: number) => ([heap[i], heap[j]] = [heap[j] as Source, heap[i] as Source]);
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && less(l, m)) m = l;
      if (r < heap.length && less(r, m)) m = r;
      if (m === i) return;
      swap(i, m);
      i = m;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
  while (heap.length > 0) {
    const top = heap[0] as Source;
    yield top.current as RunEntry;
    await top.advance();
    if (top.current === null) {
      const last = heap.pop() as Source;
      if (heap.length > 0) heap[0] = last;
    }
    down(0);
  }
}
