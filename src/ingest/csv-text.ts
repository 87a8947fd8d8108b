/** RFC 4180 text for the CSV files the agent writes (rejects reports): quote a field only when it needs it. */
export function csvField(value: string, delimiter: string): string {
  const needsQuotes = value.includes('"') || value.includes(delimiter) || value.includes('\n') || value.includes('\r');
  return needsQuotes ? `"${value.replaceAll('"', '""')}"` : value;
}

export function csvLine(fields: readonly string[], delimiter: string): string {
  return `${fields.map((f) => csvField(f, delimiter)).join(delimiter)}\r\n`;
}
