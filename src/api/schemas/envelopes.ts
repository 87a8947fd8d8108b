/** Envelopes the spec defines once and uses across endpoints ("Shared envelopes"). */
import { z } from 'zod';
import { uuid } from './common.ts';

export const JobHandle = z.looseObject({ job_id: uuid });
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

export const AuthVerifyResult = z.looseObject({ ok: z.boolean(), user_id: uuid, api_key_id: uuid });
export type AuthVerifyResult = z.infer<typeof AuthVerifyResult>;
