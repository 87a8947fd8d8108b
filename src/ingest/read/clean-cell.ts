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

export type CellCleaner = (raw: string | undefined) => string;

export function cellCleaner(nullValues: readonly string[]): CellCleaner {
  const nulls = new Set(nullValues.map((v) => v.trim().toLowerCase()).filter((v) => v !== ''));
  const longest = Math.max(0, ...[...nulls].map((v) => v.length));
  return (raw) => {
    if (raw === undefined) return '';
    let cell = raw.trim();
    if (cell === '') return cell;
    if (cell.charCodeAt(0) === 0x27 && EXCEL_TEXT_PREFIX.test(cell)) cell = cell.slice(1).trim();
    if (cell.length <= longest && nulls.has(cell.toLowerCase())) return '';
    return cell;
  };
}
