/**
 * The one quoting rule for every CSV the agent writes (rejects reports, the canonical CSV of an import, per-store
 * price files): RFC 4180, a field quoted only when it needs it, `"` doubled inside quotes, CRLF between records.
 *
 * A field needs quotes when it holds the delimiter, a quote, CR or LF, or starts or ends with whitespace: readers
 * that trim unquoted fields (many spreadsheets' import settings, some POS parsers) then still see the value as it is.
 */
export function csvField(value: string, delimiter = ','): string {
  const needsQuotes =
    value.includes('"') ||
    value.includes(delimiter) ||
    value.includes('\n') ||
    value.includes('\r') ||
    /^\s|\s$/.test(value);
  return needsQuotes ? `"${value.replaceAll('"', '""')}"` : value;
}

/** One record: the fields quoted as needed, joined by the delimiter, ended by CRLF. */
export function csvLine(fields: readonly string[], delimiter = ','): string {
  return `${fields.map((f) => csvField(f, delimiter)).join(delimiter)}\r\n`;
}
