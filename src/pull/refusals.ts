/**
 * Refusals that are a resume point's way out (docs/api-assumptions.md): the server no longer accepts a cursor or a
 * request_id the agent stored, or a parameter the document does not define. Each caller then starts over from a
 * safe point instead of sending the same request for ever.
 */
import { ApiError, API_ERROR_CODES } from '../api/errors.ts';

/** Statuses a server may answer for a stored token it no longer knows: gone, conflicting, not found, invalid. */
const TOKEN_REFUSED = new Set([404, 409, 410]);

/** A 422 whose detail names the query or body field `name`. */
export function refusesParameter(error: unknown, name: string): boolean {
  if (!(error instanceof ApiError) || error.code !== API_ERROR_CODES.validation) return false;
  return (error.detail ?? []).some((d) => d.loc.includes(name));
}

/** A stored cursor refused: 404, 409 or 410 on a request that carried it, or a 422 naming it. */
export function isRefusedCursor(error: unknown): boolean {
  if (!(error instanceof ApiError)) return false;
  return TOKEN_REFUSED.has(error.status ?? 0) || refusesParameter(error, 'cursor');
}

/** A replayed delivery refused: 404, 409, 410 or any 422 (the request is the one that succeeded before). */
export function isRefusedReplay(error: unknown): boolean {
  if (!(error instanceof ApiError)) return false;
  return TOKEN_REFUSED.has(error.status ?? 0) || error.code === API_ERROR_CODES.validation;
}
