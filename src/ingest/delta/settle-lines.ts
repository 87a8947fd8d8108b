/**
 * Delta push's line mode (compare.ts), after the merge: the lines it left undecided (their line hash is not the one
 * remembered for their key, or their key is new or repeated) read again, converted and decided by their content, as
 * content mode decides them. On the thread that merged them: the main thread for its half of the key range, the second
 * half's thread for the other (half-worker.ts), each with its own reading of the file and of the state.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import type { Entity } from '../../api/schemas/index.ts';
import { LOOKUP_KEYS, type DeltaKeyRow } from '../../store/delta-state.ts';
import type { ReadInit, RowReader } from '../read/index.ts';
import { contentHash, priceOf } from './fast/canonical.ts';
import { hashKey } from './fast/row-hash.ts';
import { compareHashes, Hash64Stream, toSigned64 } from './fast/hash.ts';
import type { RememberedRow, StateMerge } from './state-merge.ts';
import { VERDICT } from './verdicts.ts';

type Row = Readonly<Record<string, unknown>>;

/** The pieces the undecided lines are read again in. */
const SETTLE_READ_BYTES = 1024 * 1024;
/** A line read at its place is read in this much at first (twice as much until its end is in). */
const LINE_READ_BYTES = 4096;
const LF = 0x0a;
/**
 * Lines of repeated keys held in memory until all are read (about 50 bytes each): beyond, the file is compared by
 * content (a file made of repeated keys).
 */
const MAX_REPEATED_UNDECIDED = 65_536;

/** What settling needs besides the merge: the file read again, and the state's rows of some keys. */
export interface SettleInput {
  /** The file (its undecided lines are read at their places where those are known). */
  readonly file: string;
  readonly entity: Entity;
  /** The API fields the file fills, sorted (the canonical form covers them). */
  readonly fields: readonly string[];
  readonly reread: (init: ReadInit) => Promise<RowReader<Row>>;
  /** The remembered rows of these keys (signed 64-bit), those the scope has, at most LOOKUP_KEYS of them. */
  readonly lookup: (keyHashes: readonly bigint[]) => Promise<readonly DeltaKeyRow[]> | readonly DeltaKeyRow[];
}

/** A line read again in line mode, converted: its key's and its content's hashes, and its price (NaN: none). */
interface Converted {
  readonly line: number;
  readonly keyHi: number;
  readonly keyLo: number;
  readonly contentHi: number;
  readonly contentLo: number;
  readonly price: number;
}

/** The remembered rows of `entries`' keys (`lookup`, LOOKUP_KEYS at a time), by `keyId`. */
async function rememberedRows(lookup: SettleInput['lookup'], entries: readonly Converted[]): Promise<Map<string, RememberedRow>> {
  const found = new Map<string, RememberedRow>();
  for (let i = 0; i < entries.length; i += LOOKUP_KEYS) {
    const rows = await lookup(entries.slice(i, i + LOOKUP_KEYS).map((e) => toSigned64(e.keyHi, e.keyLo)));
    for (const r of rows) {
      const price = r.price === null ? Number.NaN : Number(r.price);
      found.set(keyId(r.keyHi, r.keyLo), { keyHi: r.keyHi, keyLo: r.keyLo, contentHi: r.contentHi, contentLo: r.contentLo, generation: r.generation, fileId: r.file_id, price });
    }
  }
  return found;
}

/** A key hash's halves as one map key (the high half signed, as the state answers it). */
function keyId(hi: number, lo: number): string {
  return `${hi | 0}:${lo >>> 0}`;
}

/**
 * Line mode's undecided lines, read again (only they are split and converted), decided by their content against
 * their key's remembered row, looked up LOOKUP_KEYS at a time: as content mode decides them. A line whose row does not
 * convert is sent (the send pass rejects it) and is not one of the rows compared; the lines of a key the file holds
 * more than once are decided once all are read, by which of them convert and which of those counts for the key
 * (StateMerge.settleRepeated). False when a
 * line was left undecided (the reading did not meet it), or when more lines of repeated keys are undecided than are
 * kept in memory: then the file is compared again by content, rather than trusted.
 *
 * Where the merge knows where each of its undecided lines starts (StateMerge.undecidedPlaces: their half was read as
 * bytes), only those lines are read, each at its place (`linesAt`); else the file is read again, every other line
 * skipped as bytes (`linesReadAgain`).
 */
export async function settleUndecided(merge: StateMerge, input: SettleInput): Promise<boolean> {
  if (merge.undecided === 0) return true;
  if (merge.repeatedUndecided > MAX_REPEATED_UNDECIDED) return false;
  const verdicts = merge.verdicts;
  const key = new Hash64Stream();
  const pending: Converted[] = [];
  const repeated: Converted[] = [];
  const settlePending = async (): Promise<void> => {
    const known = await rememberedRows(input.lookup, pending);
    for (const c of pending) merge.settle(c.line, c, known.get(keyId(c.keyHi, c.keyLo)) ?? null);
    pending.length = 0;
  };
  /** An undecided line's row, converted (null: a cell does not convert); a promise when a page of keys was looked up. */
  const take = (line: number, record: Row | null): Promise<void> | null => {
    if (record === null) {
      // Its key converts, another cell does not: sent, and rejected by the send pass, as without delta; not one of the
      // rows compared, as in content mode.
      merge.settle(line, null, null);
      return null;
    }
    hashKey(key, input.entity, record);
    const content = contentHash(input.entity, record, input.fields);
    const price = priceOf(input.entity, record);
    const converted = { line, keyHi: key.hi, keyLo: key.lo, contentHi: content.hi, contentLo: content.lo, price: price === null ? Number.NaN : Number(price) };
    if (verdicts.get(line) === VERDICT.undecidedRepeated) repeated.push(converted);
    else {
      pending.push(converted);
      if (pending.length === LOOKUP_KEYS) return settlePending();
    }
    return null;
  };
  const places = merge.undecidedPlaces();
  await (places === null ? linesReadAgain(merge, input, take) : linesAt(places, input, take));
  await settlePending();
  // The rows of each repeated key that converted, in file order: the one that counts for the key is compared.
  repeated.sort((a, b) => compareHashes(a.keyHi, a.keyLo, b.keyHi, b.keyLo) || a.line - b.line);
  const groups: Converted[][] = [];
  for (const c of repeated) {
    const last = groups.at(-1);
    if (last !== undefined && last[0]?.keyHi === c.keyHi && last[0].keyLo === c.keyLo) last.push(c);
    else groups.push([c]);
  }
  const known = await rememberedRows(
    input.lookup,
    groups.map((g) => g[0] as Converted),
  );
  for (const group of groups) {
    const first = group[0] as Converted;
    merge.settleRepeated(group, known.get(keyId(first.keyHi, first.keyLo)) ?? null);
  }
  return merge.undecided === 0;
}

type Take = (line: number, record: Row | null) => Promise<void> | null;

/** The undecided lines of `merge` in file order, from the file read again, every other line skipped as bytes. */
async function linesReadAgain(merge: StateMerge, input: SettleInput, take: Take): Promise<void> {
  const verdicts = merge.verdicts;
  const settledBefore = (l: number): boolean => {
    const verdict = verdicts.get(l);
    return verdict !== VERDICT.undecided && verdict !== VERDICT.undecidedRepeated;
  };
  // Large pieces: nearly every line is skipped as bytes, so the reading itself is what this pass waits for.
  const reader = await input.reread({ unvalidated: true, unmapped: settledBefore, unread: settledBefore, highWaterMark: SETTLE_READ_BYTES });
  try {
    for await (const chunk of reader.chunks()) {
      for (const outcome of chunk) {
        if (outcome.kind === 'unread' || settledBefore(outcome.line)) continue;
        const taking = take(outcome.line, outcome.kind === 'row' ? outcome.record : null);
        if (taking !== null) await taking;
      }
    }
  } finally {
    reader.close();
  }
}

/**
 * The lines at `places` in file order, each read at its place: one line of a file read as bytes (line-scan.ts: no
 * quote, no CR, valid UTF-8, its cells split on the delimiter), converted by the reader's own conversion as it converts
 * a row of the file (RowReader.conversion); a line of another width than the header, or whose cells do not convert, is
 * a reject, as the reader would make it. Read synchronously: a few thousand short reads, each far shorter than the
 * round trip to the thread pool an asynchronous one takes.
 */
async function linesAt(places: { readonly lines: readonly number[]; readonly offsets: readonly number[] }, input: SettleInput, take: Take): Promise<void> {
  const probe = await input.reread({ unvalidated: true });
  const conversion = probe.conversion();
  const { delimiter, headers } = probe.header;
  probe.close();
  if (conversion === null) throw new Error('an unvalidated reader converts rows');
  const order = places.lines.map((_, i) => i).sort((a, b) => (places.offsets[a] as number) - (places.offsets[b] as number));
  const fd = openSync(input.file, 'r');
  try {
    let buffer = Buffer.allocUnsafe(LINE_READ_BYTES);
    for (const i of order) {
      const line = places.lines[i] as number;
      const offset = places.offsets[i] as number;
      let read = readSync(fd, buffer, 0, buffer.length, offset);
      let end = buffer.subarray(0, read).indexOf(LF);
      while (end < 0 && read === buffer.length) {
        buffer = Buffer.allocUnsafe(buffer.length * 2);
        read = readSync(fd, buffer, 0, buffer.length, offset);
        end = buffer.subarray(0, read).indexOf(LF);
      }
      const fields = buffer.toString('utf8', 0, end < 0 ? read : end).split(delimiter);
      const mapped = fields.length === headers.length ? conversion.convert(fields, line) : null;
      // A row the skip rule skips is no row: never met, so left undecided, as the file read again leaves it.
      if (mapped?.kind === 'skip') continue;
      const taking = take(line, mapped === null ? null : mapped.kind === 'ok' ? mapped.record : null);
      if (taking !== null) await taking;
    }
  } finally {
    closeSync(fd);
  }
}
