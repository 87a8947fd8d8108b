
import { ApiError, ApiLocalValidationError, API_ERROR_CODES } from '../errors.ts';
import { callJson, callList, callParsed, checkBody, itemsPage, type CallOptions, type Page } from '../call.ts';
import type {
  ApprovedPrice} from '../schemas/index.ts';
import {
  ACK_BATCH_MAX,
  AckConflictBody,
  AcknowledgeResult,
  ApprovedPricePage,
  DeliveryRequest,
  type ApprovedPriceFilters,
} from '../schemas/index.ts';
import type { ApiTransport } from '../transport.ts';

export type ApprovedPriceListQuery = ApprovedPriceFilters & { limit?: number; cursor?: string };

export interface AckConflict {
  id: number;
  reason: string;
}

export function approvedPricesApi(t: ApiTransport) {
  return {
    /**
     * GET /v1/approved_prices. With history=false (the default) this is a destructive read: the rows returned move
     * out of the pending set, so it is never retried once sent. The agent's pull uses `deliveries` instead.
     */
    list: (q: ApprovedPriceListQuery = {}, o: CallOptions = {}) =>
      callList(t, 'approvedPrices.list', 'approved_prices', ApprovedPricePage, itemsPage, { ...q }, o),
    /** One page of a replayable delivery: the same request_id returns the same page again. */
    deliveries: async (body: DeliveryRequest, o: CallOptions = {}): Promise<Page<ApprovedPrice>> => {
      const json = checkBody('approvedPrices.deliveries', DeliveryRequest, body);
      const { data, response } = await callParsed(t, { operation: 'approvedPrices.deliveries', json, signal: o.signal }, ApprovedPricePage);
      return { items: data.items, nextCursor: data.next_cursor, serverDate: response.date };
    },
    /** Acknowledges up to 500 ids; a conflict with the export state is a 409 ApiError (see ackConflictsOf). */
    acknowledge: async (ids: readonly number[], o: CallOptions = {}) => {
      if (ids.length === 0 || ids.length > ACK_BATCH_MAX) {
        throw new ApiLocalValidationError('approvedPrices.acknowledge', `takes 1 to ${ACK_BATCH_MAX} ids, got ${ids.length}`);
      }
      if (!ids.every((id) => Number.isInteger(id))) {
        throw new ApiLocalValidationError('approvedPrices.acknowledge', 'approval ids are integers');
      }
      return await callJson(t, { operation: 'approvedPrices.acknowledge', json: { approval_ids: ids }, signal: o.signal }, AcknowledgeResult);
    },
  };
}

/**
 * The conflicting ids a 409 from acknowledge lists, or null when the body does not list them (the caller then finds
 * them by splitting the batch).
 */
export function ackConflictsOf(error: unknown): AckConflict[] | null {
  if (!(error instanceof ApiError) || error.code !== API_ERROR_CODES.conflict) return null;
  const parsed = AckConflictBody.safeParse(error.body);
  const conflicts = parsed.success ? parsed.data.detail.conflicts : undefined;
  return conflicts ? conflicts.map((c) => ({ id: c.id, reason: c.reason })) : null;
}

