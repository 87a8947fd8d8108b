/**
 * The line hash of delta push: a 48-bit hash of a row's cells as read (before cleaning, mapping or conversion), those
 * the source's mapping reads (HeaderInfo.usedColumns), under the file's header. The state remembers it with each row the API accepted (delta_keys.line_hash, migration
 * 0014), so that the comparison can tell an unchanged row from its cells alone: a line whose hash equals the one
 * remembered for its key, under the same mapping generation, maps to the row the API accepted, without its cells
 * being cleaned, converted or put in canonical form (compare.ts, line mode).
 *
 * Why that is exact: what a row becomes is decided by its cells, the header (which column feeds which field), the
 * source's mapping (its generation), the agent's own cleaning and conversion rules and, for some sources, the file's
 * name (`file_name`, `{file.name}`). The header, the agent's version and the name are the seed: after an upgrade (which
 * may convert a cell otherwise) no line hash remembered before it matches, and the rows are compared by their content
 * until the next full send (`delta.full_every`) remembers them again. Sources whose rows also depend on the rows above them (`fill_down`) or on their line number
 * (`{line}`) have no line hash (two-halves.ts keeps them on one thread too). Only the cells the mapping reads are hashed
 * (every column a field, a template, `fill_down` or `skip_rows` reads): a column the mapping ignores, such as an export
 * timestamp that changes every night, does not make every line differ. Each cell is hashed after its length, so any
 * cells, quoted ones holding the delimiter or a line break included, make one text (hashCells).
 *
 * 48 bits, not 64: the state's budget is 64 bytes per key, and a signed 48-bit integer takes 6 bytes in a SQLite
 * record. A line hash is only ever compared with the one remembered for the same key: a changed line passes for the
 * old one with a probability of 2^-48 (one in 281 trillion changed rows).
 */
import type { CompiledSource } from '../../read/compile-source.ts';
import type { HeaderInfo } from '../../read/types.ts';
import { AGENT_VERSION } from '../../../version.ts';
import { hash64, hashByteCells, hashCells } from './hash.ts';

/**
 * What a file's line hashes depend on besides the cells: its header, its delimiter, the columns the mapping reads, the
 * agent's version and, where it is data, its name.
 */
export interface LineSeed {
  readonly hi: number;
  readonly lo: number;
  /** The columns hashed (HeaderInfo.usedColumns). */
  readonly cells: readonly number[];
}

/**
 * The seed of a file's line hashes. `headers`: the header cells as the mapping reads them (HeaderInfo.headers);
 * `cells`: the columns the mapping reads (HeaderInfo.usedColumns); `name`: the file's name when the source reads it
 * (CompiledSource.readsFileName), else null.
 */
export function lineSeed(headers: readonly string[], delimiter: string, cells: readonly number[], name: string | null): LineSeed {
  const h = hash64(`${headers.join('\u0000')}\u0001${delimiter}\u0001${cells.join(',')}\u0001${name ?? ''}\u0001${AGENT_VERSION}`);
  return { hi: h.hi, lo: h.lo, cells: [...cells] };
}

/** Whether a row's outcome depends on rows above it (`fill_down`) or on its line number (a `{line}` template). */
export function dependsOnOtherLines(compiled: CompiledSource): boolean {
  if (compiled.fillDown.length > 0) return true;
  return [...compiled.columns.values()].some((refs) => refs.some((ref) => ref.kind === 'template' && ref.parts.some((part) => 'line' in part)));
}

/** The seed of a file's line hashes as read (`name`: as dropped), or null where its lines have none. */
export function fileLineSeed(compiled: CompiledSource, header: HeaderInfo, name: string): LineSeed | null {
  // Line mode hashes a file's lines as bytes: lines above a header found further down are no rows.
  if (header.sheet !== null || header.headerEndLine !== 1 || dependsOnOtherLines(compiled)) return null;
  return lineSeed(header.headers, header.delimiter, header.usedColumns, compiled.readsFileName ? name : null);
}

/** A seed as the state remembers it (delta_scopes.line_failed_seed). */
export function seedId(seed: LineSeed): string {
  return `${(seed.hi >>> 0).toString(16)}:${(seed.lo >>> 0).toString(16)}`;
}

const hashed = { hi: 0, lo: 0 };
const TWO_32 = 4294967296;

/** The line hash of a row's cells (RowOutcome.rawFields), a signed 48-bit integer; NaN for no cells. */
export function lineHashOf(fields: readonly string[], seed: LineSeed): number {
  if (fields.length === 0) return Number.NaN;
  hashCells(fields, seed.cells, hashed);
  return seeded(seed);
}

/** lineHashOf of an ASCII line's cells given as byte ranges (hashByteCells: line-scan.ts). */
export function lineHashOfBytes(bytes: Uint8Array, starts: Int32Array, ends: Int32Array, seed: LineSeed): number {
  hashByteCells(bytes, starts, ends, seed.cells, hashed);
  return seeded(seed);
}

/** `hashed` under the seed, as 48 bits: the high half's low 16 bits, sign-extended, above the low half: [-2^47, 2^47). */
function seeded(seed: LineSeed): number {
  return (((hashed.hi ^ seed.hi) << 16) >> 16) * TWO_32 + ((hashed.lo ^ seed.lo) >>> 0);
}

/** The line hash as the state binds it (decimal text, like the other hashes), or null. */
export function storedLineHash(hash: number): string | null {
  return Number.isNaN(hash) ? null : String(hash);
}
