/** Approved prices: the history list, the replayable deliveries and acknowledge, read tolerantly. */
import { z } from 'zod';
import { ApiError, ApiLocalValidationError, API_ERROR_CODES } from '../errors.ts';
import { callList, callParsed, checkBody, type CallOptions, type Page } from '../call.ts';
import {
  ACK_BATCH_MAX,
  ACK_BODY_SHAPES,
  ApprovedPrice,
  DeliveryRequest,
  ackBody,
  listPage,
  readInteger,
  type AckBodyShape,
  type ApprovedPriceFilters,
} from '../schemas/index.ts';
import type { ApiTransport } from '../transport.ts';

export type ApprovedPriceListQuery = ApprovedPriceFilters & { limit?: number; cursor?: string };

export interface AckConflict {
  id: number;
  /** The reason the body gives, or null when it names the id without one. */
  reason: string | null;
}

/** A 2xx of acknowledge: the status and the body as sent (204: null). */
export interface AckResponse {
  status: number;
  body: unknown;
}

export function approvedPricesApi(t: ApiTransport) {
  return {
    /**
     * GET /v1/approved_prices. With history=false (the default) this is a destructive read: the rows returned move
     * out of the pending set, so it is never retried once sent. The agent's pull uses `deliveries` instead.
     */
    list: (q: ApprovedPriceListQuery = {}, o: CallOptions = {}) =>
      callList(t, 'approvedPrices.list', 'approved_prices', RawPage, (page) => ({ ...readRows(page.items), nextCursor: page.next_cursor }), { ...q }, o),
    /**
     * One page of a replayable delivery: the same request_id returns the same page again. Items are checked one by
     * one: a row the agent cannot read (no id or no price) is returned apart, so that it never blocks the page.
     */
    deliveries: async (body: DeliveryRequest, o: CallOptions = {}): Promise<Page<ApprovedPrice> & { unreadable: UnreadableRow[] }> => {
      const json = checkBody('approvedPrices.deliveries', DeliveryRequest, body);
      const { data, response } = await callParsed(t, { operation: 'approvedPrices.deliveries', json, signal: o.signal }, RawPage);
      return { ...readRows(data.items), nextCursor: data.next_cursor, serverDate: response.date };
    },
    /**
     * Acknowledges up to 500 ids with the body in `shape` (the document names no field; the pull negotiates it,
     * src/pull/ack-body.ts). Any 2xx is success for every id sent, whatever its body says; a refusal is an
     * ApiError (409: ackConflictsOf; 422: ackRefusalOf).
     */
    acknowledge: async (ids: readonly number[], o: CallOptions & { shape?: AckBodyShape } = {}): Promise<AckResponse> => {
      if (ids.length === 0 || ids.length > ACK_BATCH_MAX) {
        throw new ApiLocalValidationError('approvedPrices.acknowledge', `takes 1 to ${ACK_BATCH_MAX} ids, got ${ids.length}`);
      }
      if (!ids.every((id) => Number.isInteger(id))) {
        throw new ApiLocalValidationError('approvedPrices.acknowledge', 'approval ids are integers');
      }
      const response = await t.send({ operation: 'approvedPrices.acknowledge', json: ackBody(o.shape ?? ACK_BODY_SHAPES[0], ids), signal: o.signal });
      return { status: response.status, body: response.body };
    },
  };
}

/** A delivered row the agent could not read: kept aside (and logged), never acknowledged. */
export interface UnreadableRow {
  index: number;
  raw: unknown;
  problem: string;
}

const RawPage = listPage(z.unknown());

/** The rows of a page the agent can read, and apart those it cannot. */
function readRows(raw: readonly unknown[]): { items: ApprovedPrice[]; unreadable: UnreadableRow[] } {
  const items: ApprovedPrice[] = [];
  const unreadable: UnreadableRow[] = [];
  raw.forEach((row, index) => {
    const parsed = ApprovedPrice.safeParse(row);
    if (parsed.success) items.push(parsed.data);
    else unreadable.push({ index, raw: row, problem: firstProblem(parsed.error) });
  });
  return { items, unreadable };
}

function firstProblem(error: z.ZodError): string {
  const first = error.issues[0];
  return first ? `${first.path.join('.') || '(row)'}: ${first.message}` : 'unreadable';
}

const ids = z.array(readInteger);
const conflictEntries = z.array(z.looseObject({ id: readInteger, reason: z.string().nullish(), status: z.string().nullish() }));

/**
 * The conflicting ids a 409 from acknowledge names, or null when its body names none (the caller then finds them
 * by splitting the batch). The body is not shown in the document; recognized: a list of `{id, reason}` under
 * `detail.conflicts`, `conflicts`, `detail.items` or `items`, or a list of ids under `conflicting_ids`, `ids`,
 * `conflicts` (each also under `detail`). Anything else names no id.
 */
export function ackConflictsOf(error: unknown): AckConflict[] | null {
  if (!(error instanceof ApiError) || error.code !== API_ERROR_CODES.conflict) return null;
  const body = error.body;
  const places = [body, isObject(body) ? body.detail : undefined].filter(isObject);
  for (const place of places) {
    for (const key of ['conflicts', 'items']) {
      const entries = conflictEntries.safeParse(place[key]);
      if (entries.success && entries.data.length > 0) return entries.data.map((c) => ({ id: c.id, reason: c.reason ?? c.status ?? null }));
    }
    for (const key of ['conflicting_ids', 'ids', 'conflicts']) {
      const list = ids.safeParse(place[key]);
      if (list.success && list.data.length > 0) return list.data.map((id) => ({ id, reason: null }));
    }
  }
  return null;
}

/**
 * What a 2xx of acknowledge says per id, when it says it in a form the agent recognizes; every id sent is
 * acknowledged whatever this returns. `changed`: the ids the body lists under `acknowledged` (a server may list
 * only those whose state changed); `repeatedCount`: how many were acknowledged before, when the body counts or
 * lists them under `already_acknowledged`.
 */
export function ackDetailOf(body: unknown, sent: readonly number[]): { changed: number[] | null; repeatedCount: number | null } {
  if (!isObject(body)) return { changed: null, repeatedCount: null };
  const listed = ids.safeParse(body.acknowledged);
  if (listed.success) {
    const inBatch = new Set(sent);
    return { changed: listed.data.filter((id) => inBatch.has(id)), repeatedCount: null };
  }
  const repeated = body.already_acknowledged;
  if (Array.isArray(repeated)) return { changed: null, repeatedCount: repeated.length };
  return { changed: null, repeatedCount: typeof repeated === 'number' && Number.isInteger(repeated) && repeated >= 0 ? repeated : null };
}

/**
 * How a 422 of acknowledge refuses the batch: `shape`, the body is not the shape the server takes (every problem is
 * about the body or a field of it, none about an element); `ids`, it names positions of ids in the body (returned);
 * `unknown`, it says neither.
 */
export function ackRefusalOf(error: unknown): { kind: 'shape' } | { kind: 'ids'; positions: number[] } | { kind: 'unknown' } {
  if (!(error instanceof ApiError) || error.code !== API_ERROR_CODES.validation) return { kind: 'unknown' };
  const detail = error.detail ?? [];
  if (detail.length === 0) return { kind: 'unknown' };
  const positions = detail.map((d) => d.loc.find((part, i) => i > 0 && typeof part === 'number')).filter((p) => typeof p === 'number');
  if (positions.length > 0) return { kind: 'ids', positions: [...new Set(positions)] };
  return detail.every((d) => d.loc[0] === 'body' && d.loc.length <= 2) ? { kind: 'shape' } : { kind: 'unknown' };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
