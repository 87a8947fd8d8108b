/**
 * Opaque cursors: base64url of a small JSON object holding the list's name and a keyset position. Clients must
 * treat them as opaque; the sandbox refuses a cursor of another list or a tampered one with a 422 on
 * ['query', 'cursor'] (or ['body', 'pagination', 'cursor'] for deliveries).
 *
 * Every cursor is a keyset position (never an offset), so rows inserted or removed while a client pages through a
 * listing never make it skip a row. In a dialect whose cursors expire (dialect.ts `expiryMs`), a cursor also holds
 * the time it was issued, and one older than the lifetime is answered 410.
 */

export const CURSOR_EXPIRED = 'expired';

/** When cursors expire: the request's time and the lifetime; absent or ttlMs null, never. */
export interface CursorClock {
  readonly now: number;
  readonly ttlMs: number | null;
}

export function encodeCursor(list: string, position: number, clock?: CursorClock): string {
  const value = clock?.ttlMs == null ? { l: list, p: position } : { l: list, p: position, t: clock.now };
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** The position stored in `cursor`; null when it is not a cursor of `list`; CURSOR_EXPIRED past its lifetime. */
export function decodeCursor(list: string, cursor: string, clock?: CursorClock): number | null | typeof CURSOR_EXPIRED {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { l, p, t } = value as { l?: unknown; p?: unknown; t?: unknown };
  if (l !== list || typeof p !== 'number' || !Number.isSafeInteger(p)) return null;
  if (clock?.ttlMs != null && (typeof t !== 'number' || clock.now - t > clock.ttlMs)) return CURSOR_EXPIRED;
  return p;
}
