/**
 * The `pattern` of a source: a glob of file names (`*` any run of characters, `?` one character), matched whole and
 * regardless of case: ERP systems on Windows write `EXPORT.CSV` as readily as `export.csv`. One home for the rule:
 * the inbox matches names with it (src/ingest/watch/file-name-rules.ts) and the config refuses two sources on one
 * folder whose patterns can take the same name (src/config/source-schema.ts).
 */

/** The glob as a whole-name, case-insensitive RegExp. */
export function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split('')
    .map((ch) => (ch === '*' ? '[^/]*' : ch === '?' ? '[^/]' : ch.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`, 'i');
}

/**
 * Whether some file name matches both globs (`*.csv` and `*.CSV`, `*.csv` and `prices-*.csv`): walks both at once,
 * a `*` of either taking nothing or the other's next character, over each pair of positions once.
 */
export function globsOverlap(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const seen = new Map<number, boolean>();
  const from = (i: number, j: number): boolean => {
    const key = i * (y.length + 1) + j;
    const known = seen.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (i === x.length && j === y.length) result = true;
    else if (x[i] === '*') result = from(i + 1, j) || (j < y.length && from(i, j + 1));
    else if (y[j] === '*') result = from(i, j + 1) || (i < x.length && from(i + 1, j));
    else result = i < x.length && j < y.length && (x[i] === '?' || y[j] === '?' || x[i] === y[j]) && from(i + 1, j + 1);
    seen.set(key, result);
    return result;
  };
  return from(0, 0);
}
