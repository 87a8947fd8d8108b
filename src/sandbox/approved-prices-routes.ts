/**
 * GET /v1/approved_prices, POST /v1/approved_prices/deliveries and POST /v1/approved_prices/acknowledge.
 *
 * Deliveries are replayable: the serialized page is kept under its request_id and a later request with the same
 * request_id gets the identical bytes, whatever changed since and whatever the rest of its body says (the request_id
 * alone names the page). A new request_id with the same cursor continues from that cursor against current state.
 */
import {
  ACK_BODY_SCHEMAS,
  ApprovedPriceFilters,
  DeliveryRequest,
  LIST_LIMITS,
  ackBodyIds,
  toValidationErrors,
  type AckBodyShape,
  type ValidationError,
} from '../api/schemas/index.ts';
import { approvalJson, type ApprovalPage } from './approval-book.ts';
import { CURSOR_EXPIRED, decodeCursor } from './cursor.ts';
import type { Dialect } from './dialect.ts';
import { renderBody } from './dialect-wire.ts';
import { detail, invalid, json, validationError, type Reply } from './http-io.ts';
import { EXPIRED_CURSOR, checkValue, listContext, nextCursorOf, parseLimit, unknownParameters, type ListContext } from './query.ts';
import type { Router } from './router.ts';
import type { ApiContext } from './world.ts';

/** The text filters of the list, read as they come; `history` is a boolean, read on its own. */
const FILTER_NAMES = Object.keys(ApprovedPriceFilters.shape).filter((name) => name !== 'history');

const LIST_CURSOR = { current: 'approved_prices', history: 'approved_prices_history' } as const;
const DELIVERY_CURSOR = 'deliveries';

function pageJson(page: ApprovalPage, list: string, delivery: boolean, context: ListContext): { items: unknown[]; next_cursor: string | null } {
  return {
    items: page.rows.map((row) => approvalJson(row, delivery)),
    next_cursor: nextCursorOf(list, page.next, context),
  };
}

function listReply(ctx: ApiContext): Reply {
  const { query } = ctx;
  const context = listContext(ctx);
  const errors: ValidationError[] = unknownParameters(query, 'approved_prices', [], context);
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
  const before = cursor === null || cursor === '' ? null : decodeCursor(list, cursor, context.clock);
  if (before === CURSOR_EXPIRED) return EXPIRED_CURSOR;
  if (cursor !== null && cursor !== '' && before === null) {
    errors.push(validationError(['query', 'cursor'], 'Invalid cursor', 'value_error', cursor));
  }
  if (errors.length > 0 || !filters.success || typeof limit !== 'number') return invalid(errors);
  const { history: historyFlag = false, ...values } = filters.data;
  const { approvals } = ctx.world;
  const page = approvals.list(historyFlag, values, before, limit);
  const reply = json(200, pageJson(page, list, false, context));
  if (!historyFlag) approvals.markExported(page.rows, ctx.now);
  return reply;
}

/**
 * A delivery page. The page is rendered in the dialect and kept as bytes under its request_id: a replay answers the
 * identical bytes, until the request_id expires (then 409: the id was used and its page is gone).
 */
function deliveriesReply(ctx: ApiContext): Reply {
  const parsed = DeliveryRequest.safeParse(ctx.body, { reportInput: true });
  if (!parsed.success) return invalid(toValidationErrors(parsed.error, ['body']));
  const { world } = ctx;
  const { dialect } = world;
  const context = listContext(ctx);
  world.counters.delivery_requests += 1;
  const request = parsed.data;
  const memo = world.deliveries.get(request.request_id);
  if (memo !== undefined) {
    if (dialect.expiryMs !== null && ctx.now - memo.at > dialect.expiryMs) {
      return detail(409, `request_id ${request.request_id} was used already and its page has expired`);
    }
    world.counters.delivery_replays += 1;
    return { status: 200, raw: memo.raw };
  }
  const cursor = request.pagination?.cursor;
  const after = cursor === undefined || cursor === '' ? null : decodeCursor(DELIVERY_CURSOR, cursor, context.clock);
  if (after === CURSOR_EXPIRED) return EXPIRED_CURSOR;
  if (cursor !== undefined && cursor !== '' && after === null) {
    return invalid([validationError(['body', 'pagination', 'cursor'], 'Invalid cursor', 'value_error', cursor)]);
  }
  const { history = dialect.deliveryHistoryDefault, ...filters } = request.filters ?? {};
  const limit = request.pagination?.limit ?? LIST_LIMITS.approved_prices.default;
  const page = world.approvals.deliver(history, filters, after, limit, dialect.deliveries === 'exactly_once');
  const raw = JSON.stringify(renderBody(pageJson(page, DELIVERY_CURSOR, true, context), dialect));
  if (!history) world.approvals.markExported(page.rows, ctx.now);
  world.deliveries.set(request.request_id, { raw, at: ctx.now });
  return { status: 200, raw };
}

/** The ids of an acknowledge body in one of the shapes the dialect accepts, or the 422 of its first shape. */
function ackIds(body: unknown, dialect: Dialect): { ids: number[]; shape: AckBodyShape } | Reply {
  let first: ValidationError[] | null = null;
  for (const shape of dialect.ackRequest) {
    const parsed = ACK_BODY_SCHEMAS[shape].safeParse(body, { reportInput: true });
    if (parsed.success) return { ids: ackBodyIds(shape, parsed.data), shape };
    first ??= toValidationErrors(parsed.error, ['body']);
  }
  return invalid(first ?? []);
}

/** The 409 in the dialect's shape; `listIds` false (control.setAckConflictDetail) leaves the ids out of any shape. */
function conflictReply(conflicts: readonly { id: number; reason: string }[], dialect: Dialect, listIds: boolean): Reply {
  const message = `${conflicts.length} approval id(s) conflict with the current export state; nothing in this batch was acknowledged`;
  switch (dialect.ackConflictBody) {
    case 'message':
      return json(409, { detail: message });
    case 'ids':
      return json(409, listIds ? { error: 'conflict', message, conflicting_ids: conflicts.map((c) => c.id) } : { error: 'conflict', message });
    case 'conflicts':
      return json(409, { detail: listIds ? { message, conflicts } : { message } });
  }
}

function acknowledgeReply(ctx: ApiContext): Reply {
  const { world } = ctx;
  const { dialect } = world;
  const body = ackIds(ctx.body, dialect);
  if ('status' in body) return body;
  if (dialect.ackUnknownId === 'validation') {
    const loc = (index: number) => (body.shape === 'array' ? ['body', index] : ['body', body.shape, index]);
    const unknown = body.ids.flatMap((id, index) =>
      world.approvals.get(id) ? [] : [validationError(loc(index), `Value error, unknown approval id ${id}`, 'value_error', id)],
    );
    if (unknown.length > 0) return invalid(unknown);
  }
  const outcome = world.approvals.acknowledge(body.ids, dialect.ackRepeat === 'accept');
  if (!outcome.ok) return conflictReply(outcome.conflicts, dialect, world.ackConflictDetail);
  switch (dialect.ackSuccess) {
    case 'none':
      return { status: 204 };
    case 'changed':
      return json(200, { acknowledged: outcome.changed });
    case 'counts':
      return json(200, { acknowledged: outcome.changed.length, already_acknowledged: outcome.repeated.length });
    case 'ids':
      return json(200, { acknowledged: [...outcome.changed, ...outcome.repeated] });
  }
}

export function addApprovedPriceRoutes(router: Router<ApiContext>): void {
  router
    .add('GET', '/v1/approved_prices', 'none', listReply)
    .add('POST', '/v1/approved_prices/deliveries', 'json', deliveriesReply)
    .add('POST', '/v1/approved_prices/acknowledge', 'json', acknowledgeReply);
}
