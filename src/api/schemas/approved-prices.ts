/** Approved prices: the platform's finalized prices, pulled by the agent and acknowledged in batches. */
import { z } from 'zod';
import { ACK_BATCH_MAX, LIST_LIMITS } from './limits.ts';
import { isoDate, isoDateTime, nullish, readDateTime, readInteger, uuid } from './common.ts';
import { listPage } from './envelopes.ts';

/**
 * An approved price as read (deliveries, history). Required: what the outbox cannot do without, the id, the price,
 * its currency and when it was approved (the effective date of a price without one). Every other field may be
 * absent (read as null) or shaped as the server likes (trace and approval_details are kept, never interpreted);
 * the whole record is stored as received. Dates keep the server's text (readDateTime).
 */
export const ApprovedPrice = z.looseObject({
  id: readInteger,
  grid_id: nullish(z.string()),
  grid_item_id: nullish(readInteger),
  item_id: nullish(z.string()),
  sku: nullish(z.string()),
  store_id: nullish(z.string()),
  current_price: nullish(z.string()),
  proposed_price: nullish(z.string()),
  approved_price: z.string(),
  effective_date: nullish(isoDate),
  currency_code: z.string(),
  proposal_source: nullish(z.string()),
  source: nullish(z.string()),
  trace: z.unknown().optional(),
  approved_at: readDateTime,
  approved_by_user_id: nullish(z.string()),
  approval_details: z.unknown().optional(),
  export_status: nullish(z.string()),
  exported_at: nullish(readDateTime),
  cancelled_at: nullish(readDateTime),
  predecessor_id: nullish(readInteger),
  amendment_reason: nullish(z.string()),
  delivery_channel: nullish(z.string()),
});
export type ApprovedPrice = z.infer<typeof ApprovedPrice>;

export const ApprovedPricePage = listPage(ApprovedPrice);
export type ApprovedPricePage = z.infer<typeof ApprovedPricePage>;

/** The filters shared by the list query and the delivery body. */
export const ApprovedPriceFilters = z.strictObject({
  history: z.boolean().optional(),
  grid_id: uuid.optional(),
  store_id: uuid.optional(),
  item_id: z.string().optional(),
  sku: z.string().optional(),
  approved_after: isoDateTime.optional(),
  approved_before: isoDateTime.optional(),
  effective_after: isoDate.optional(),
  effective_before: isoDate.optional(),
});
export type ApprovedPriceFilters = z.infer<typeof ApprovedPriceFilters>;

const pageSize = z.number().int().min(1).max(LIST_LIMITS.approved_prices.max);

/** Body of POST /v1/approved_prices/deliveries; `request_id` makes it replayable (our choice: required). */
export const DeliveryRequest = z.strictObject({
  request_id: uuid,
  filters: ApprovedPriceFilters.optional(),
  pagination: z.strictObject({ limit: pageSize.optional(), cursor: z.string().optional() }).optional(),
});
export type DeliveryRequest = z.infer<typeof DeliveryRequest>;

/** The ids of one acknowledge: 1..500 integers. */
const ackIds = z.array(z.number().int()).min(1).max(ACK_BATCH_MAX);

/**
 * Body of POST /v1/approved_prices/acknowledge. The spec says "list of up to 500 approval ids" and shows no field
 * names. Three readings are plausible: `{"approval_ids": [...]}` (the agent's first choice and the sandbox's default
 * dialect), `{"ids": [...]}`, and the bare list. The agent tries them in this order on a 422 that says the shape is
 * wrong and remembers the one that worked (src/pull/ack-body.ts); the sandbox's dialects accept one or more of them.
 */
export const ACK_BODY_SHAPES = ['approval_ids', 'ids', 'array'] as const;
export type AckBodyShape = (typeof ACK_BODY_SHAPES)[number];

export const ACK_BODY_SCHEMAS = {
  approval_ids: z.strictObject({ approval_ids: ackIds }),
  ids: z.strictObject({ ids: ackIds }),
  array: ackIds,
} as const satisfies Record<AckBodyShape, z.ZodType>;

/** The acknowledge body of `ids` in `shape`. */
export function ackBody(shape: AckBodyShape, ids: readonly number[]): unknown {
  if (shape === 'array') return [...ids];
  return shape === 'ids' ? { ids: [...ids] } : { approval_ids: [...ids] };
}

/** The ids of a body that parsed as `shape`. */
export function ackBodyIds(shape: AckBodyShape, body: unknown): number[] {
  if (shape === 'array') return body as number[];
  return shape === 'ids' ? (body as { ids: number[] }).ids : (body as { approval_ids: number[] }).approval_ids;
}

/** The default dialect's body (kept under its old name for the contract tests). */
export const AcknowledgeRequest = ACK_BODY_SCHEMAS.approval_ids;
export type AcknowledgeRequest = z.infer<typeof AcknowledgeRequest>;

/** Success response of acknowledge in the sandbox's default dialect (not shown in the spec). */
export const AcknowledgeResult = z.looseObject({ acknowledged: z.array(z.number().int()) });
export type AcknowledgeResult = z.infer<typeof AcknowledgeResult>;

/** Why an id conflicts with the current export state (409 body; not shown in the spec; the sandbox's names). */
export const AckConflictReason = z.enum(['cancelled', 'superseded', 'already_acknowledged', 'unknown']);
export type AckConflictReason = z.infer<typeof AckConflictReason>;

/** The sandbox's default 409 body. The agent reads 409 bodies through ackConflictsOf (several shapes, or none). */
export const AckConflictBody = z.looseObject({
  detail: z.looseObject({
    message: z.string().optional(),
    conflicts: z.array(z.looseObject({ id: z.number().int(), reason: z.string() })).optional(),
  }),
});
export type AckConflictBody = z.infer<typeof AckConflictBody>;
