/**
 * Opaque cursors: base64url of a small JSON object holding the list's name and a keyset position. Clients must
 * treat them as opaque; the sandbox refuses a cursor of another list or a tampered one with a 422 on
 * ['query', 'cursor'] (or ['body', 'pagination', 'cursor'] for deliveries).
 *
 * Every cursor is a keyset position (never an offset), so rows inserted or removed while a client pages through a
 * listing never make it skip a row.
 */

export function encodeCursor(list: string, position: number): string {
  return Buffer.from(JSON.stringify({ l: list, p: position }), 'utf8').toString('base64url');
}

/** The position stored in `cursor`, or null when it is not a cursor of `list`. */
export function decodeCursor(list: string, cursor: string): number | null {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (typeof value !== 'object' || value === null) return null;
    const { l, p } = value as { l?: unknown; p?: unknown };
    if (l !== list || typeof p !== 'number' || !Number.isSafeInteger(p)) return null;
    return p;
  } catch {
    return null;
  }
}
