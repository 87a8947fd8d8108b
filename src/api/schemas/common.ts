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

/*
 * Reading what a server sends: tolerant by design (docs/api-assumptions.md). The document leaves presence, date
 * forms and envelope names open, so a read schema requires only what the agent needs and tolerates the rest: an
 * optional field may be absent or null, a timestamp keeps the server's own text, a listing ends at a null, absent
 * or empty next_cursor. Write schemas (what the agent sends) stay exact.
 */

/**
 * `next_cursor` as read: null, absent or "" all end the listing (the document: null ends it; a server that leaves
 * nulls out or writes an empty string means the same).
 */
export const nextCursor = z
  .string()
  .nullish()
  .transform((value) => (value === undefined || value === '' ? null : value));

/**
 * A timestamp as a server may write it under "ISO 8601 in UTC": with or without fractions of any length, with `Z`,
 * an offset (`+00:00`, `+0000`) or, read as UTC, none. The text is kept as sent (the server understands its own
 * form when it comes back as updated_after); compare through `instantOf`.
 */
export const READ_DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|z|[+-]\d{2}(:?\d{2})?)?$/;
export const readDateTime = z.string().regex(READ_DATE_TIME, { error: 'expected an ISO 8601 date-time' });

/** Epoch ms of a timestamp read from the API (`readDateTime`); a time without a zone is UTC. NaN if unparsable. */
export function instantOf(text: string): number {
  const zoned = /(Z|z|[+-]\d{2}(:?\d{2})?)$/.test(text.slice(10)) ? text : `${text}Z`;
  const normalized = zoned.replace(' ', 'T').replace(/([+-]\d{2})(\d{2})$/, '$1:$2').replace(/([+-]\d{2})$/, '$1:00');
  return Date.parse(normalized);
}

/** An id shaped like a UUID (8-4-4-4-12 hex), whatever its version and variant bits. */
export const readUuid = z.guid();

/**
 * An optional field as read: absent, null or a value. Not filled in: the parsed record stays the record as the
 * server sent it (it is stored as received); readers write `?? null`.
 */
export function nullish<T extends z.ZodType>(schema: T) {
  return schema.nullish();
}

/** An integer id as read: a JSON integer, or a string of digits (a server may quote large ids). */
export const readInteger = z.union([
  z.number().int(),
  z
    .string()
    .regex(/^\d{1,15}$/)
    .transform(Number),
]);

/** Decimal schema variants: what the agent sends (strings only) and what the API accepts (strings or numbers). */
export type DecimalSchema = typeof decimalString | typeof decimalInput;
