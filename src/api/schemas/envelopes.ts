/** Envelopes the spec defines once and uses across endpoints ("Shared envelopes"), and the page of a listing. */
import { z } from 'zod';
import { nextCursor, readUuid } from './common.ts';

/** A job id as read: UUID-shaped (any version and variant). */
export const JobHandle = z.looseObject({ job_id: readUuid });
export type JobHandle = z.infer<typeof JobHandle>;

/** One entry per input row, in index order. `id` is a UUID string or, for competitor prices, an integer. */
export const BulkItemResult = z.looseObject({
  index: z.number().int().nonnegative(),
  ok: z.boolean(),
  id: z.union([z.string(), z.number().int()]).optional(),
  code: z.string().optional(),
  message: z.string().optional(),
});
export type BulkItemResult = z.infer<typeof BulkItemResult>;

export const BulkResponse = z.looseObject({ results: z.array(BulkItemResult) });
export type BulkResponse = z.infer<typeof BulkResponse>;

export const ValidationError = z.looseObject({
  loc: z.array(z.union([z.string(), z.number().int()])),
  msg: z.string(),
  type: z.string(),
  input: z.unknown().optional(),
  ctx: z.record(z.string(), z.unknown()).optional(),
});
export type ValidationError = z.infer<typeof ValidationError>;

export const HTTPValidationError = z.looseObject({ detail: z.array(ValidationError) });
export type HTTPValidationError = z.infer<typeof HTTPValidationError>;

/** auth/verify as read: ids UUID-shaped (any variant); `ok` when the server sends it. */
export const AuthVerifyResult = z.looseObject({ ok: z.boolean().optional(), user_id: readUuid, api_key_id: readUuid });
export type AuthVerifyResult = z.infer<typeof AuthVerifyResult>;

/**
 * A page of a listing as read: the rows under `items` or `data` (the document uses both, and shows neither for
 * products or grids), the end of the listing at a null, absent or empty next_cursor. Normalized to
 * `{items, next_cursor}`.
 */
export function listPage<T extends z.ZodType>(item: T) {
  return z
    .looseObject({ items: z.array(item).optional(), data: z.array(item).optional(), next_cursor: nextCursor })
    .refine((page) => page.items !== undefined || page.data !== undefined, {
      error: 'expected the rows under items or data',
      path: ['items'],
    })
    .transform((page) => ({ items: (page.items ?? page.data ?? []), next_cursor: page.next_cursor }));
}
