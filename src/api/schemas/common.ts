/**
 * Primitive field schemas shared by every resource of the Public API.
 *
 * Both sides use these: the agent validates what it sends (and what it reads back), the sandbox validates what
 * it receives. A change of the contract therefore shows up on both sides at once.
 */
import { z } from 'zod';

/** The spec's decimal-string pattern (product-store decimals; we apply it to every money/quantity field). */
export const DECIMAL_PATTERN = /^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$/;

/**
 * Length limits. The spec says "length limits: not shown"; these are our documented choice (docs/sandbox.md):
 * identifiers up to 255 characters, free text up to 1000.
 */
export const MAX_ID_LENGTH = 255;
export const MAX_TEXT_LENGTH = 1000;

/** A decimal as the agent sends it: always a string, never a float. */
export const decimalString = z.string().regex(DECIMAL_PATTERN, { error: 'Input should be a valid decimal' });

/**
 * A decimal as the API accepts it: a decimal string or a JSON number ("they may be sent as numbers or strings").
 * Numbers are turned into their shortest string form before the pattern check, so the stored value is a string.
 */
export const decimalInput = z.preprocess(
  (value) => (typeof value === 'number' && Number.isFinite(value) ? String(value) : value),
  decimalString,
);

/** ISO 8601 date-time; UTC (`Z`) or an explicit offset. */
export const isoDateTime = z.iso.datetime({ offset: true, error: 'Input should be a valid datetime' });
/** ISO 8601 calendar date, YYYY-MM-DD. */
export const isoDate = z.iso.date({ error: 'Input should be a valid date' });
export const uuid = z.uuid();

/** A required business identifier: non-empty, bounded. */
export const identifier = z.string().min(1).max(MAX_ID_LENGTH);
/** Optional free text on write; `null` clears the field. */
export const optionalText = z.string().max(MAX_TEXT_LENGTH).nullable().optional();
export const optionalIdentifier = z.string().max(MAX_ID_LENGTH).nullable().optional();

/** A page of a cursor-paginated listing: `next_cursor` is null on the last page. */
export const nextCursor = z.string().nullable();

/** Decimal schema variants: what the agent sends (strings only) and what the API accepts (strings or numbers). */
export type DecimalSchema = typeof decimalString | typeof decimalInput;
