/**
 * A column of strings by slot, kept as bytes in one buffer instead of as a heap object each: a million
 * transaction ids and timestamps are then two buffers the garbage collector never traces, instead of two million
 * strings it marks on every full collection.
 *
 * A string of ASCII characters takes a byte per character; any other string is kept as its UTF-16 code units (two
 * bytes each), so every JavaScript string comes back exactly as it was set, lone surrogates included. Rewriting a
 * slot with the same string keeps its bytes; any other rewrite or a clear leaves the old bytes unused, and the
 * buffer is compacted when unused bytes outnumber used ones, so memory stays proportional to the strings held.
 */

/** Length code of an empty slot (no string or null). */
const NONE = -0x80000000;
const MIN_SLOTS = 1024;
const MIN_BYTES = 64 * 1024;
const MAX_BYTES = 2 ** 32;

export class StringColumn {
  /** Byte offset of each slot's string (the buffer stays under 4 GiB). */
  #offsets = new Uint32Array(MIN_SLOTS);
  /** Length of each slot's string: n >= 0 for n ASCII bytes, -1 - n for n UTF-16 code units, NONE for null. */
  #lengths = new Int32Array(MIN_SLOTS).fill(NONE);
  #bytes = Buffer.allocUnsafe(MIN_BYTES);
  /** Bytes written so far; those of live slots. */
  #end = 0;
  #live = 0;
  /** One past the highest slot ever set. */
  #slots = 0;

  /** Sets `slot` to `value` (null empties it). */
  set(slot: number, value: string | null): void {
    if (slot >= this.#lengths.length) this.#growSlots(slot + 1);
    if (slot >= this.#slots) this.#slots = slot + 1;
    const previous = this.#lengths[slot]!;
    if (previous !== NONE) {
      if (value !== null && this.equals(slot, value)) return;
      this.#live -= byteLength(previous);
    }
    if (value === null) {
      this.#lengths[slot] = NONE;
      return;
    }
    const n = value.length;
    if (this.#end + n > this.#bytes.length) this.#makeRoom(n);
    let at = this.#end;
    let bytes = this.#bytes;
    // Written as ASCII while it is; the first other character starts over in UTF-16.
    let ascii = true;
    for (let i = 0; i < n; i += 1) {
      const code = value.charCodeAt(i);
      if (code > 0x7f) {
        ascii = false;
        break;
      }
      bytes[at + i] = code;
    }
    const size = ascii ? n : 2 * n;
    if (!ascii) {
      if (this.#end + size > this.#bytes.length) this.#makeRoom(size);
      at = this.#end;
      bytes = this.#bytes;
      bytes.write(value, at, size, 'utf16le');
    }
    this.#offsets[slot] = at;
    this.#lengths[slot] = ascii ? n : -1 - n;
    this.#end = at + size;
    this.#live += size;
  }

  get(slot: number): string | null {
    const length = slot < this.#slots ? this.#lengths[slot]! : NONE;
    if (length === NONE) return null;
    const at = this.#offsets[slot]!;
    return length >= 0 ? this.#bytes.toString('latin1', at, at + length) : this.#bytes.toString('utf16le', at, at + 2 * (-1 - length));
  }

  /** True when `slot` holds `value` (no string is made). */
  equals(slot: number, value: string): boolean {
    const length = slot < this.#slots ? this.#lengths[slot]! : NONE;
    if (length === NONE) return false;
    const at = this.#offsets[slot]!;
    const bytes = this.#bytes;
    if (length >= 0) {
      if (value.length !== length) return false;
      for (let i = 0; i < length; i += 1) if (bytes[at + i] !== value.charCodeAt(i)) return false;
      return true;
    }
    const units = -1 - length;
    if (value.length !== units) return false;
    for (let i = 0; i < units; i += 1) if ((bytes[at + 2 * i]! | (bytes[at + 2 * i + 1]! << 8)) !== value.charCodeAt(i)) return false;
    return true;
  }

  /** Bytes the column holds (its buffer and its per-slot arrays). */
  get byteSize(): number {
    return this.#bytes.length + this.#offsets.byteLength + this.#lengths.byteLength;
  }

  #growSlots(needed: number): void {
    const capacity = Math.max(needed, Math.ceil(this.#lengths.length * 1.5));
    const offsets = new Uint32Array(capacity);
    offsets.set(this.#offsets);
    const lengths = new Int32Array(capacity).fill(NONE);
    lengths.set(this.#lengths);
    this.#offsets = offsets;
    this.#lengths = lengths;
  }

  /** Room for `size` more bytes: a compacted copy when unused bytes are the majority, else a buffer half as large again. */
  #makeRoom(size: number): void {
    const unused = this.#end - this.#live;
    const compact = unused > this.#live;
    const needed = (compact ? this.#live : this.#end) + size;
    // At least a byte a slot: a compaction walks every slot, and this many bytes must be written before the next.
    const capacity = Math.max(MIN_BYTES, this.#slots, needed, Math.ceil((compact ? needed : this.#bytes.length) * 1.5));
    if (capacity > MAX_BYTES) throw new RangeError('a string column holds at most 4 GiB');
    const bytes = Buffer.allocUnsafe(capacity);
    if (compact) {
      let end = 0;
      for (let slot = 0; slot < this.#slots; slot += 1) {
        const length = this.#lengths[slot]!;
        if (length === NONE) continue;
        const n = byteLength(length);
        const at = this.#offsets[slot]!;
        this.#bytes.copy(bytes, end, at, at + n);
        this.#offsets[slot] = end;
        end += n;
      }
      this.#end = end;
    } else this.#bytes.copy(bytes, 0, 0, this.#end);
    this.#bytes = bytes;
  }
}

function byteLength(length: number): number {
  return length >= 0 ? length : 2 * (-1 - length);
}
