/** Approved prices: the platform's finalized prices, pulled by the agent and acknowledged in batches. */
import { z } from 'zod';
import { ACK_BATCH_MAX, LIST_LIMITS } from './limits.ts';
import { isoDate, isoDateTime, nextCursor, uuid } from './common.ts';

export const TraceEntry = z.looseObject({
  source: z.string(),
  column_key: z.string().nullable().optional(),
  source_job_id: z.string().nullable().optional(),
  payload: z.unknown(),
});

export const ApprovalDetails = z.looseObject({
  run_id: z.string().nullable().optional(),
  policy_id: z.string().nullable().optional(),
  policy_revision: z.number().int().nullable().optional(),
  user_id: z.string().nullable().optional(),
  evaluated_at: z.string().nullable().optional(),
  minimum_margin_pct: z.string().nullable().optional(),
  maximum_change_pct: z.string().nullable().optional(),
  margin_pct: z.string().nullable().optional(),
  change_pct: z.string().nullable().optional(),
  method: z.string().nullable().optional(),
});

export const ApprovedPrice = z.looseObject({
  id: z.number().int(),
  grid_id: z.string(),
  grid_item_id: z.number().int(),
  item_id: z.string().nullable(),
  sku: z.string().nullable(),
  store_id: z.string().nullable(),
  current_price: z.string().nullable(),
  proposed_price: z.string(),
  approved_price: z.string(),
  effective_date: isoDate.nullable(),
  currency_code: z.string(),
  proposal_source: z.string(),
  source: z.string(),
  trace: z.array(TraceEntry),
  approved_at: isoDateTime,
  approved_by_user_id: z.string(),
  approval_details: ApprovalDetails,
  export_status: z.string(),
  exported_at: isoDateTime.nullable().optional(),
  cancelled_at: isoDateTime.nullable().optional(),
  predecessor_id: z.number().int().nullable().optional(),
  amendment_reason: z.string().nullable().optional(),
  delivery_channel: z.string().nullable().optional(),
});
export type ApprovedPrice = z.infer<typeof ApprovedPrice>;

export const ApprovedPricePage = z.looseObject({ items: z.array(ApprovedPrice), next_cursor: nextCursor });
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

/**
 * Body of POST /v1/approved_prices/acknowledge. The spec says "list of up to 500 approval ids" and shows no field
 * names; our documented choice is `{"approval_ids": [...]}`.
 */
export const AcknowledgeRequest = z.strictObject({
  approval_ids: z.array(z.number().int()).min(1).max(ACK_BATCH_MAX),
});
export type AcknowledgeRequest = z.infer<typeof AcknowledgeRequest>;

/** Success response of acknowledge (not shown in the spec; our choice). */
export const AcknowledgeResult = z.looseObject({ acknowledged: z.array(z.number().int()) });
export type AcknowledgeResult = z.infer<typeof AcknowledgeResult>;

/** Why an id conflicts with the current export state (409 body; not shown in the spec; our choice). */
export const AckConflictReason = z.enum(['cancelled', 'superseded', 'already_acknowledged', 'unknown']);
export type AckConflictReason = z.infer<typeof AckConflictReason>;

/** 409 body. A server may omit `conflicts`; the agent then finds the ids by splitting the batch. */
export const AckConflictBody = z.looseObject({
  detail: z.looseObject({
    message: z.string().optional(),
    conflicts: z.array(z.looseObject({ id: z.number().int(), reason: z.string() })).optional(),
  }),
});
export type AckConflictBody = z.infer<typeof AckConflictBody>;
