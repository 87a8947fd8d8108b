/**
 * A cell as the mapping reads it. Runs once per used cell of every row; the rejects report always shows the cell
 * as it was in the file, never the cleaned value.
 *
 * 1. Surrounding whitespace is trimmed.
 * 2. Excel's text prefix: a leading apostrophe before something that looks like a number, a code or a date
 *    (`'7350177880091`, `'0204`, `'2026-03-01`) is what Excel writes to keep it text; it is removed. An apostrophe
 *    before words (`'Tis the season`) is kept: it may be the value.
 * 3. A null marker (`null_values`, compared without case) is an empty cell: `#N/A` is never sent as a product type.
 */

/** What follows an apostrophe that Excel put there: digits and the punctuation of numbers, codes and dates. */
const EXCEL_TEXT_PREFIX = /^'[0-9+\-.,/:() ]+$/;

export interface CellCleaner {
  (raw: string | undefined): string;
  /**
   * True when the cell of bytes [start, end) is ASCII and the cleaner returns it as it is: not empty, no whitespace
   * around it, no leading apostrophe, no null marker. Decided on the bytes, without a string, for a cell longer than
   * every null marker or not starting like one. False also for a cell the cleaner might keep (`'Tis`, `Müsli`): the
   * caller then cleans its text. For delta push's first pass over bytes (ingest/delta/fast/line-scan.ts).
   */
  readonly keeps: (bytes: Uint8Array, start: number, end: number) => boolean;
}

/** Whitespace String.prototype.trim removes, among ASCII bytes: TAB, LF, VT, FF, CR, space. */
const isAsciiSpace = (b: number): boolean => b === 0x20 || (b >= 0x09 && b <= 0x0d);

export function cellCleaner(nullValues: readonly string[]): CellCleaner {
  const nulls = new Set(nullValues.map((v) => v.trim().toLowerCase()).filter((v) => v !== ''));
  const longest = Math.max(0, ...[...nulls].map((v) => v.length));
  /** The first code unit of each null marker (lower case): an ASCII cell starting otherwise is none. */
  const firsts = new Set([...nulls].map((v) => v.charCodeAt(0)));
  const clean = (raw: string | undefined): string => {
    if (raw === undefined) return '';
    let cell = raw.trim();
    if (cell === '') return cell;
    if (cell.charCodeAt(0) === 0x27 && EXCEL_TEXT_PREFIX.test(cell)) cell = cell.slice(1).trim();
    if (cell.length <= longest && nulls.has(cell.toLowerCase())) return '';
    return cell;
  };
  const keeps = (bytes: Uint8Array, start: number, end: number): boolean => {
    if (end <= start) return false;
    for (let i = start; i < end; i++) if ((bytes[i] as number) >= 0x80) return false;
    const first = bytes[start] as number;
    if (isAsciiSpace(first) || first === 0x27 || isAsciiSpace(bytes[end - 1] as number)) return false;
    if (end - start > longest) return true;
    // As short as a null marker: compared as the cleaner compares it, when its first letter could start one.
    if (!firsts.has(first >= 0x41 && first <= 0x5a ? first + 0x20 : first)) return true;
    return !nulls.has(Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1').toLowerCase());
  };
  return Object.assign(clean, { keeps });
}
