/**
 * The few steps every typed method shares: enforce the spec's limits before sending, send, validate the response
 * against the contract (loose: new fields are tolerated, missing required fields are errors), and page through
 * cursor listings.
 */
import type { z } from 'zod';
import { ApiError, ApiLocalValidationError, API_ERROR_CODES } from './errors.ts';
import type { OperationName } from './operations.ts';
import { BULK_BATCH_MAX, BulkResponse, JobHandle, LIST_LIMITS, type ListName } from './schemas/index.ts';
import type { ApiRequest, ApiResponse, ApiTransport, QueryValue } from './transport.ts';

export interface CallOptions {
  signal?: AbortSignal | undefined;
}

/** One page of a cursor listing, whatever the envelope's field name (`items` or `data`). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
  /** The server's Date header: the watermark of a listing whose rows carry no updated_at. */
  serverDate: Date | null;
}

export async function callParsed<S extends z.ZodType>(
  transport: ApiTransport,
  request: ApiRequest,
  schema: S,
): Promise<{ data: z.infer<S>; response: ApiResponse }> {
  const response = await transport.send(request);
  const parsed = schema.safeParse(response.body);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first ? ` at ${first.path.join('.') || '(root)'}: ${first.message}` : '';
    throw new ApiError(API_ERROR_CODES.badResponse, `${request.operation}: unexpected response body${where}`, {
      operation: request.operation,
      status: response.status,
      body: response.body,
      retryable: false,
    });
  }
  return { data: parsed.data, response };
}

export async function callJson<S extends z.ZodType>(transport: ApiTransport, request: ApiRequest, schema: S): Promise<z.infer<S>> {
  return (await callParsed(transport, request, schema)).data;
}

export async function callNoContent(transport: ApiTransport, request: ApiRequest): Promise<void> {
  await transport.send(request);
}

/** Refuses a page size outside the spec's range before any request is made. */
export function checkLimit(operation: OperationName, list: ListName, limit: number | undefined): void {
  if (limit === undefined) return;
  const { max } = LIST_LIMITS[list];
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new ApiLocalValidationError(operation, `limit must be an integer from 1 to ${max}, got ${String(limit)}`);
  }
}

export function checkBatch(operation: OperationName, items: readonly unknown[]): void {
  if (items.length === 0 || items.length > BULK_BATCH_MAX) {
    throw new ApiLocalValidationError(operation, `a bulk request takes 1 to ${BULK_BATCH_MAX} items, got ${items.length}`);
  }
}

/** Validates a body the agent is about to send against the strict write schema; a mismatch is a local error. */
export function checkBody<S extends z.ZodType>(operation: OperationName, schema: S, body: unknown): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new ApiLocalValidationError(operation, `invalid body${first ? ` at ${first.path.join('.')}: ${first.message}` : ''}`);
  }
  return parsed.data;
}

/**
 * A call with a JSON body: the body is checked against `bodySchema` first (a bad one throws before anything is sent,
 * synchronously, as checkBody does), and the reply is read as `reply`.
 */
export function callWithBody<S extends z.ZodType>(
  transport: ApiTransport,
  target: Pick<ApiRequest, 'operation' | 'id'>,
  bodySchema: z.ZodType,
  body: unknown,
  reply: S,
  o: CallOptions,
): Promise<z.infer<S>> {
  return callJson(transport, { ...target, json: checkBody(target.operation, bodySchema, body), signal: o.signal }, reply);
}

/** Drops undefined values so that only what the caller set becomes a query parameter. */
export function query(values: Record<string, QueryValue>): Record<string, QueryValue> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined && v !== null));
}

/**
 * Pages through a cursor listing until `next_cursor` is null. `startCursor` resumes an interrupted listing (the
 * mirrors store the cursor after each page).
 */
export async function* paginate<P extends { nextCursor: string | null }>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
  startCursor?: string,
): AsyncGenerator<P, void, undefined> {
  let cursor = startCursor;
  for (;;) {
    const page = await fetchPage(cursor);
    yield page;
    if (page.nextCursor === null) return;
    cursor = page.nextCursor;
  }
}

/** POST a bulk batch; the response must hold exactly one result per item, in index order. */
export async function callBulk(
  transport: ApiTransport,
  operation: OperationName,
  items: readonly unknown[],
  options: CallOptions,
): Promise<BulkResponse> {
  checkBatch(operation, items);
  const data = await callJson(transport, { operation, json: { items }, signal: options.signal }, BulkResponse);
  if (data.results.length !== items.length || data.results.some((r, i) => r.index !== i)) {
    throw new ApiError(API_ERROR_CODES.badResponse, `${operation}: expected ${items.length} results in index order, got ${data.results.length}`, {
      operation,
      status: 200,
      body: data,
      retryable: false,
    });
  }
  return data;
}

export interface ListQuery {
  limit?: number | undefined;
  /** Resume a listing from a stored cursor. */
  cursor?: string | undefined;
  [filter: string]: QueryValue;
}

/**
 * A cursor listing as an async iterator over pages. The limit is checked now, before the first request, so a bad
 * limit fails at the call site rather than at the first `next()`.
 */
export function callList<S extends z.ZodType, P extends { items: unknown[]; nextCursor: string | null }>(
  transport: ApiTransport,
  operation: OperationName,
  list: ListName,
  schema: S,
  itemsOf: (page: z.infer<S>) => P,
  listQuery: ListQuery,
  options: CallOptions & { id?: string },
): AsyncGenerator<P & { serverDate: Date | null }, void, undefined> {
  checkLimit(operation, list, listQuery.limit);
  return paginate(async (cursor) => {
    const { data, response } = await callParsed(
      transport,
      { operation, id: options.id, query: query({ ...listQuery, cursor }), signal: options.signal },
      schema,
    );
    return { ...itemsOf(data), serverDate: response.date };
  }, listQuery.cursor);
}

/** For envelopes of the `{items, next_cursor}` form. */
export function itemsPage<T>(page: { items: T[]; next_cursor: string | null }): { items: T[]; nextCursor: string | null } {
  return { items: page.items, nextCursor: page.next_cursor };
}

/** Uploads a CSV file as an import; the job id comes back at once (202). */
export function callImport(transport: ApiTransport, operation: OperationName, filePath: string, options: CallOptions): Promise<JobHandle> {
  return callJson(transport, { operation, uploadFile: filePath, signal: options.signal }, JobHandle);
}
