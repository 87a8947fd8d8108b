/**
 * Plain-text helpers for the read commands (`status`, `files`): aligned columns and short local times. Output is
 * for people on a terminal or in a ticket; scripts use `--json`.
 */
import { localDate } from '../../clock.ts';

/** Columns whose header starts with this are right-aligned (numbers). */
export const NUMERIC = '#';

/**
 * Aligns `rows` under `headers` with two spaces between columns. A header starting with `#` marks a numeric,
 * right-aligned column (the `#` is not printed). The last column is not padded.
 */
export function table(headers: readonly string[], rows: readonly (readonly string[])[], indent = ''): string[] {
  const numeric = headers.map((h) => h.startsWith(NUMERIC));
  const titles = headers.map((h) => (h.startsWith(NUMERIC) ? h.slice(1) : h));
  const widths = titles.map((t, i) => Math.max(t.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    indent +
    cells
      .map((cell, i) => {
        const width = widths[i] ?? 0;
        if (numeric[i]) return cell.padStart(width);
        return i === cells.length - 1 ? cell : cell.padEnd(width);
      })
      .join('  ')
      .trimEnd();
  return [line(titles), ...rows.map(line)];
}

function two(n: number): string {
  return String(n).padStart(2, '0');
}

/** An ISO instant as local time: `14:05` today, `2026-03-01 14:05` on another day, `-` for none. */
export function shortTime(iso: string | null | undefined, now: Date): string {
  if (iso === null || iso === undefined) return '-';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const time = `${two(d.getHours())}:${two(d.getMinutes())}`;
  const day = localDate(d.getTime());
  return day === localDate(now.getTime()) ? time : `${day} ${time}`;
}

/** `1 file`, `2 files`. */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/** A label and its value, the labels padded to one width, at least `minWidth` (a block of `key  value` lines). */
export function labelled(pairs: readonly (readonly [string, string])[], minWidth = 0): string[] {
  const width = Math.max(minWidth, ...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
}

/** A length of time for people: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
}

/** " (fixes #12)" after the name of a corrected rejects CSV; "" for any other file. */
export function fixesNote(fixesFileId: number | null): string {
  return fixesFileId === null ? '' : ` (fixes #${fixesFileId})`;
}
