/**
 * GET /v1/approved_prices, POST /v1/approved_prices/deliveries and POST /v1/approved_prices/acknowledge.
 *
 * Deliveries are replayable: the serialized page is kept under its request_id and a later request with the same
 * request_id gets the identical bytes, whatever changed since and whatever the rest of its body says (the request_id
 * alone names the page). A new request_id with the same cursor continues from that cursor against current state.
 */
import {
  AcknowledgeRequest,
  ApprovedPriceFilters,
  DeliveryRequest,
  LIST_LIMITS,
  toValidationErrors,
  type ValidationError,
} from '../api/schemas/index.ts';
import { approvalJson, type ApprovalPage } from './approval-book.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { invalid, json, validationError, type Reply } from './http-io.ts';
import { checkValue, parseLimit } from './query.ts';
import type { Router } from './router.ts';
import type { ApiContext } from './world.ts';

const FILTER_NAMES = [
  'grid_id',
  'store_id',
  'item_id',
  'sku',
  'approved_after',
  'approved_before',
  'effective_after',
  'effective_before',
] as const;

const LIST_CURSOR = { current: 'approved_prices', history: 'approved_prices_history' } as const;
const DELIVERY_CURSOR = 'deliveries';

function pageJson(page: ApprovalPage, list: string, delivery: boolean): { items: unknown[]; next_cursor: string | null } {
  return {
    items: page.rows.map((row) => approvalJson(row, delivery)),
    next_cursor: page.next === null ? null : encodeCursor(list, page.next),
  };
}

function listReply(ctx: ApiContext): Reply {
  const { query } = ctx;
  const errors: ValidationError[] = [];
  const raw: Record<string, unknown> = {};
  const history = query.get('history');
  if (history !== null) {
    const checked = checkValue('bool', history, ['query', 'history']);
    if (typeof checked === 'string') raw.history = checked === 'true';
    else errors.push(...checked);
  }
  for (const name of FILTER_NAMES) {
    const value = query.get(name);
    if (value !== null) raw[name] = value;
  }
  const filters = ApprovedPriceFilters.safeParse(raw, { reportInput: true });
  if (!filters.success) errors.push(...toValidationErrors(filters.error, ['query']));
  const limit = parseLimit(query.get('limit'), LIST_LIMITS.approved_prices, ['query', 'limit']);
  if (typeof limit !== 'number') errors.push(limit);
  const list = raw.history === true ? LIST_CURSOR.history : LIST_CURSOR.current;
  const cursor = query.get('cursor');
  const before = cursor === null || cursor === '' ? null : decodeCursor(list, cursor);
  if (cursor !== null && cursor !== '' && before === null) {
    errors.push(validationError(['query', 'cursor'], 'Invalid cursor', 'value_error', cursor));
  }
  if (errors.length > 0 || !filters.success || typeof limit !== 'number') return invalid(errors);
  const { history: historyFlag = false, ...values } = filters.data;
  const { approvals } = ctx.world;
  const page = approvals.list(historyFlag, values, before, limit);
  const reply = json(200, pageJson(page, list, false));
  if (!historyFlag) approvals.markExported(page.rows, ctx.now);
  return reply;
}

function deliveriesReply(ctx: ApiContext): Reply {
  const parsed = DeliveryRequest.safeParse(ctx.body, { reportInput: true });
  if (!parsed.success) return invalid(toValidationErrors(parsed.error, ['body']));
  const { world } = ctx;
  world.counters.delivery_requests += 1;
  const request = parsed.data;
  const memo = world.deliveries.get(request.request_id);
  if (memo !== undefined) {
    world.counters.delivery_replays += 1;
    return { status: 200, raw: memo };
  }
  const cursor = request.pagination?.cursor;
  const after = cursor === undefined || cursor === '' ? null : decodeCursor(DELIVERY_CURSOR, cursor);
  if (cursor !== undefined && cursor !== '' && after === null) {
    return invalid([validationError(['body', 'pagination', 'cursor'], 'Invalid cursor', 'value_error', cursor)]);
  }
  const { history = false, ...filters } = request.filters ?? {};
  const limit = request.pagination?.limit ?? LIST_LIMITS.approved_prices.default;
  const page = world.approvals.deliver(history, filters, after, limit);
  const raw = JSON.stringify(pageJson(page, DELIVERY_CURSOR, true));
  if (!history) world.approvals.markExported(page.rows, ctx.now);
  world.deliveries.set(request.request_id, raw);
  return { status: 200, raw };
}

function acknowledgeReply(ctx: ApiContext): Reply {
  const parsed = AcknowledgeRequest.safeParse(ctx.body, { reportInput: true });
  if (!parsed.success) return invalid(toValidationErrors(parsed.error, ['body']));
  const { world } = ctx;
  const outcome = world.approvals.acknowledge(parsed.data.approval_ids);
  if (outcome.ok) return json(200, { acknowledged: outcome.acknowledged });
  const message = `${outcome.conflicts.length} approval id(s) conflict with the current export state; nothing in this batch was acknowledged`;
  return json(409, { detail: world.ackConflictDetail ? { message, conflicts: outcome.conflicts } : { message } });
}

export function addApprovedPriceRoutes(router: Router<ApiContext>): void {
  router
    .add('GET', '/v1/approved_prices', 'none', listReply)
    .add('POST', '/v1/approved_prices/deliveries', 'json', deliveriesReply)
    .add('POST', '/v1/approved_prices/acknowledge', 'json', acknowledgeReply);
}
