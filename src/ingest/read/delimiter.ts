/**
 * Delimiter detection from the header line (`delimiter: auto`). csv-parse's own `delimiter_auto` samples
 * data rows and throws on a bad quote in its sample; header lines are short and regular, so we count there.
 * The candidate that occurs most often outside quotes wins; none, or a tie, is an error that names the counts,
 * because guessing wrong would turn every row into a field-count reject.
 */

export const DELIMITER_CANDIDATES = [',', ';', '\t', '|'] as const;
export type DetectedDelimiter = (typeof DELIMITER_CANDIDATES)[number];

export type Detection = { ok: true; delimiter: DetectedDelimiter } | { ok: false; message: string };

function label(delimiter: string): string {
  return delimiter === '\t' ? 'tab' : `"${delimiter}"`;
}

/** `line` is the first line of the file, without its line break. */
export function detectDelimiter(line: string): Detection {
  const counts = new Map<string, number>(DELIMITER_CANDIDATES.map((d) => [d, 0]));
  let quoted = false;
  for (const chr of line) {
    if (chr === '"') quoted = !quoted;
    else if (!quoted && counts.has(chr)) counts.set(chr, (counts.get(chr) ?? 0) + 1);
  }
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  const [best, second] = ranked;
  if (best === undefined || best[1] === 0) {
    const hint = quoted ? ' (the line ends inside quotes: is a quote not closed?)' : '';
    return {
      ok: false,
      message: `could not detect the delimiter: the header line holds none of , ; tab | outside quotes${hint}; set \`delimiter:\``,
    };
  }
  if (second !== undefined && second[1] === best[1]) {
    return {
      ok: false,
      message:
        `could not detect the delimiter: the header line holds ${best[1]} x ${label(best[0])} and ` +
        `${second[1]} x ${label(second[0])}; set \`delimiter:\``,
    };
  }
  return { ok: true, delimiter: best[0] as DetectedDelimiter };
}

/**
 * The delimiter of a file from its first lines (`lines[0]` is line 1): from line 1 when it detects one (a header on
 * line 1, as before), else from the header's line when `header_row` says which, else from the first line that
 * detects one (letterhead lines above a header hold no delimiter, header-rows.ts). Line 1's failure otherwise.
 */
export function detectDelimiterIn(lines: readonly string[], headerRow: number | undefined): Detection {
  if (headerRow !== undefined && headerRow > 1 && lines[headerRow - 1] !== undefined) return detectDelimiter(lines[headerRow - 1] as string);
  const line1 = lines[0] ?? '';
  const first = detectDelimiter(line1);
  if (first.ok && headerRow === undefined) return delimiterUnderLetterhead(lines, first.delimiter) ?? first;
  // A quote on line 1 may be one left open: its hint stands, no later line is taken instead.
  if (first.ok || headerRow !== undefined || line1.includes('"')) return first;
  for (const line of lines.slice(1)) {
    const detected = detectDelimiter(line);
    if (detected.ok) return detected;
  }
  return first;
}

/** How many lines after line 1 are looked at for a letterhead's sake. */
const LETTERHEAD_CHECK_LINES = 10;

/**
 * The delimiter of the table under a letterhead line that happens to hold another candidate (`Preisliste Filiale
 * 0204, Stand 01.07.2025` above `Artikel;Marke;Filiale;Preis`): every one of the next non-blank lines (up to 10, at
 * least 2) detects the same other delimiter, as often on each, more often than line 1 holds its own, and line 1 holds
 * none of it. Else null: line 1 stands.
 */
function delimiterUnderLetterhead(lines: readonly string[], onLine1: DetectedDelimiter): Detection | null {
  const count = (line: string, delimiter: string) => line.split(delimiter).length - 1;
  const next = lines.slice(1, 1 + LETTERHEAD_CHECK_LINES).filter((line) => line.trim() !== '');
  if (next.length < 2) return null;
  const detections = next.map(detectDelimiter);
  const other = detections[0];
  if (other?.ok !== true || other.delimiter === onLine1) return null;
  const width = count(next[0] as string, other.delimiter);
  const line1 = lines[0] ?? '';
  const agree = detections.every((d, i) => d.ok && d.delimiter === other.delimiter && count(next[i] as string, other.delimiter) === width);
  return agree && width > count(line1, onLine1) && count(line1, other.delimiter) === 0 ? other : null;
}
