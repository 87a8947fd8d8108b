/**
 * The feed API's endpoints (docs/feed.md is the contract for POS developers):
 *
 *   GET  /feed/v1/changes?after=SEQ&limit=N&wait=S   the consumer's rows after SEQ (default: its offset); long-poll
 *   GET  /feed/v1/current?store=ID                    one store's prices in force and upcoming, and the seq they reflect
 *   GET  /feed/v1/offset                              the consumer's committed offset
 *   PUT  /feed/v1/offset      {"seq": N}              commit the offset (never moves back)
 *   POST /feed/v1/applied     {"store_id", "seq", "applied_at"}   the store applied every price up to seq (204)
 *
 * Every request needs `Authorization: Bearer <token>`. Order of checks: path (404), method (405), token (401),
 * rate limit and requests in progress (429), then the request itself (400, 403, 406, 413, 422). Errors are `{"detail": "..."}`; no answer
 * and no log line contains a token.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { isoDateTime } from '../api/schemas/index.ts';
import { type Clock, localDate } from '../clock.ts';
import type { Logger } from '../log.ts';
import { feedHeader, feedRecord, formatFeedRow } from '../outbox/feed-format.ts';
import { advanceConsumer, consumerOffset, feedHasStore, FEED_PAGE_DEFAULT, FEED_PAGE_MAX, type FeedRow } from '../store/price-feed.ts';
import { StoreError } from '../store/errors.ts';
import { recordApplied } from '../store/feed-consumers.ts';
import { openStoreSnapshot, type StoreSnapshot } from '../store/store-snapshot.ts';
import type { StateDb } from '../store/state-db.ts';
import { type ConsumerDirectory, type FeedConsumer, inScope } from './consumers.ts';
import { CONTENT_TYPES, FeedHttpError, negotiate, readJsonBody, sendEmpty, sendError, sendJson } from './http.ts';
import type { ConsumerLoad } from './consumer-load.ts';
import type { LastSeen } from './last-seen.ts';
import type { LongPollHub } from './long-poll.ts';
import type { RateLimiter } from './rate-limit.ts';
import { streamAnswer } from './stream-answer.ts';

/** The longest `wait` of a long-poll, seconds. */
export const MAX_WAIT_SECONDS = 60;
/** Request bodies are a few dozen bytes; anything near this is not a feed client. */
export const MAX_BODY_BYTES = 16 * 1024; // 16 KiB

export interface FeedEvents {
  /** Every answer: the consumer (null before a token was accepted) and the status. */
  answered?(consumer: string | null, status: number): void;
  /** Rows handed to a consumer by /changes. */
  served?(consumer: string, rows: number): void;
}

export interface FeedContext {
  readonly db: StateDb;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly directory: () => ConsumerDirectory;
  readonly hub: LongPollHub;
  /** Per consumer. */
  readonly limiter: RateLimiter;
  /** Per consumer: requests in progress, and the bytes their answers hold. */
  readonly load: ConsumerLoad;
  /** A client that takes nothing of an answer for this long loses its connection (FeedLimits.responseFlushMs). */
  readonly answerStallMs: number;
  /** Per client address, for requests without a valid token. */
  readonly strangers: RateLimiter;
  /** Client address -> when a request from it without a valid token was last logged (ms). */
  readonly strangerWarnings: Map<string, number>;
  readonly seen: LastSeen;
  readonly databaseId: string;
  readonly events: FeedEvents;
}

interface Call {
  readonly ctx: FeedContext;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly consumer: FeedConsumer;
}

type Handler = (call: Call) => number | Promise<number>;

/** The reason a long-poll's signal carries when its client went away (one object: no error built per request). */
const CLIENT_GONE = new Error('the client closed the connection');

const ROUTES: Record<string, Partial<Record<string, Handler>>> = {
  '/feed/v1/changes': { GET: changes },
  '/feed/v1/current': { GET: current },
  '/feed/v1/offset': { GET: getOffset, PUT: putOffset },
  '/feed/v1/applied': { POST: applied },
};

/** Answers one request; never throws. */
export async function handleFeedRequest(ctx: FeedContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = ctx.clock.now();
  let consumer: FeedConsumer | null = null;
  let status: number;
  let path = '';
  try {
    const url = new URL(req.url ?? '/', 'http://feed.invalid');
    path = url.pathname.slice(0, 200);
    const route = ROUTES[url.pathname];
    if (route === undefined) throw new FeedHttpError(404, `no such endpoint: ${path} (see docs/feed.md)`);
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? '');
    const handler = route[method];
    if (handler === undefined) {
      const allow = Object.keys(route).join(', ');
      throw new FeedHttpError(405, `${req.method ?? ''} is not allowed here; use ${allow}`, { allow });
    }
    consumer = authenticate(ctx, req);
    const decision = ctx.limiter.take(consumer.name);
    if (!decision.ok) {
      throw new FeedHttpError(429, `too many requests for ${consumer.name}; retry after ${decision.retryAfterSeconds} s`, {
        'retry-after': String(decision.retryAfterSeconds),
      });
    }
    if (!ctx.load.enter(consumer.name, res)) {
      const limit = ctx.load.limit;
      throw new FeedHttpError(429, `${consumer.name} has ${limit} requests in progress (feed.max_requests_per_consumer); retry after 1 s`, { 'retry-after': '1' });
    }
    ctx.seen.touch(consumer.name);
    status = await handler({ ctx, req, res, url, consumer });
  } catch (error) {
    const failure = asHttpError(error);
    status = failure.status;
    if (status >= 500) ctx.logger.error({ consumer: consumer?.name, error: (error as Error).message }, 'feed request failed');
    // A connection that has not shown a valid token is not kept open: else a stranger could hold every connection
    // of feed.max_connections with a wrong path every few seconds, and the tills would be refused.
    sendError(res, consumer === null ? failure.closing() : failure);
  }
  ctx.events.answered?.(consumer?.name ?? null, status);
  if (ctx.logger.isLevelEnabled('debug')) {
    ctx.logger.debug({ consumer: consumer?.name ?? null, method: req.method, path, status, duration_ms: ctx.clock.now() - started }, 'feed request');
  }
}

function asHttpError(error: unknown): FeedHttpError {
  if (error instanceof FeedHttpError) return error;
  if (error instanceof StoreError && error.code === 'SEQ_BEYOND_FEED') return new FeedHttpError(422, error.message);
  return new FeedHttpError(500, "the agent could not answer; its log says why");
}

/** The consumer of the request's token; 401 (or 429 for an address that keeps sending bad tokens). */
function authenticate(ctx: FeedContext, req: IncomingMessage): FeedConsumer {
  const consumer = ctx.directory().authenticate(req.headers.authorization);
  if (consumer) return consumer;
  const address = req.socket.remoteAddress ?? 'unknown';
  const decision = ctx.strangers.take(address);
  if (!decision.ok) {
    throw new FeedHttpError(429, `too many requests without a valid token; retry after ${decision.retryAfterSeconds} s`, {
      'retry-after': String(decision.retryAfterSeconds),
    });
  }
  const missing = req.headers.authorization === undefined;
  warnStranger(ctx, address, missing);
  throw new FeedHttpError(401, missing ? 'send Authorization: Bearer <token>' : 'the token is not valid for this feed', {
    'www-authenticate': 'Bearer realm="pricing-agent feed"',
  });
}

/** How often a request without a valid token is logged, per client address. */
const STRANGER_WARNING_MS = 60 * 60 * 1000; // 1 h

/** Logs at warn, once an hour per address, that a client sent no valid token: usually a till set up wrong. */
function warnStranger(ctx: FeedContext, address: string, missing: boolean): void {
  const now = ctx.clock.now();
  const last = ctx.strangerWarnings.get(address);
  if (last !== undefined && now - last < STRANGER_WARNING_MS) return;
  if (ctx.strangerWarnings.size >= 1000) ctx.strangerWarnings.clear(); // bounded: a scan of many addresses
  ctx.strangerWarnings.set(address, now);
  const what = missing ? 'without a token' : 'with a token that is not configured';
  ctx.logger.warn({ address }, `a feed request came from ${address} ${what} (401); check that client's token (logged once an hour per address)`);
}

/** A non-negative integer query parameter (digits only), or `fallback` when absent. */
function integerParam(url: URL, name: string, fallback: () => number, max: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null) return fallback();
  if (!/^\d{1,16}$/.test(raw) || Number(raw) > max) {
    throw new FeedHttpError(422, `${name} must be an integer from 0 to ${max}, got ${JSON.stringify(raw.slice(0, 40))}`);
  }
  return Number(raw);
}

async function changes({ ctx, req, res, url, consumer }: Call): Promise<number> {
  const format = negotiate(req.headers.accept);
  if (format === null) throw new FeedHttpError(406, 'Accept one of application/json, application/x-ndjson, text/csv');
  const stored = url.searchParams.has('after') ? undefined : await consumerOffset(ctx.db, consumer.name);
  const after = integerParam(url, 'after', () => stored ?? 0, Number.MAX_SAFE_INTEGER);
  const limit = integerParam(url, 'limit', () => FEED_PAGE_DEFAULT, FEED_PAGE_MAX);
  if (limit < 1) throw new FeedHttpError(422, `limit must be an integer from 1 to ${FEED_PAGE_MAX}, got 0`);
  const waitMs = waitParam(url);
  const gone = new AbortController();
  const onClose = () => gone.abort(CLIENT_GONE);
  res.once('close', onClose);
  const outcome = await ctx.hub.poll({ consumer, after, limit, waitMs, signal: gone.signal });
  res.off('close', onClose);
  if (outcome.kind === 'gone') return 499; // nobody to answer; counted as nginx does
  if (outcome.kind === 'beyond') {
    throw new FeedHttpError(
      422,
      `after ${after} is beyond the last seq of the feed (${outcome.last}): the agent's database was restored or recreated; start again from GET /feed/v1/current`,
    );
  }
  if (outcome.kind === 'revoked') {
    throw new FeedHttpError(401, 'the token is not valid for this feed', { 'www-authenticate': 'Bearer realm="pricing-agent feed"' });
  }
  const rows = outcome.kind === 'rows' ? outcome.rows : [];
  // Past the last row when the agent read further and found nothing more for this consumer: its next request then
  // starts where the hub is, and waits without a read (long-poll.ts). An empty page answers the `after` asked for.
  const nextAfter = outcome.kind === 'rows' && rows.length > 0 ? outcome.upTo : after;
  const headers = {
    'feed-next-after': String(nextAfter),
    'feed-database-id': ctx.databaseId,
    ...(outcome.kind === 'closing' ? { connection: 'close' } : {}),
  };
  const written = await streamAnswer(res, 200, CONTENT_TYPES[format], changesBody(format, rows, nextAfter), headers, answerOptions(ctx, consumer));
  if (!written) return 499; // the client went away mid-answer: the rest was never made
  ctx.events.served?.(consumer.name, rows.length);
  return 200;
}

/** How a streamed answer of `consumer` is bounded and counted. */
function answerOptions(ctx: FeedContext, consumer: FeedConsumer): { stallMs: number; onSlice: (bytes: number) => void } {
  return { stallMs: ctx.answerStallMs, onSlice: (bytes) => ctx.load.wrote(consumer.name, bytes) };
}

/** A page as the parts of its answer: what JSON.stringify, the JSON Lines or the CSV of the whole page would give. */
function* changesBody(format: 'json' | 'ndjson' | 'csv', rows: readonly FeedRow[], nextAfter: number): Generator<string> {
  if (format === 'json') {
    yield '{"items":';
    yield* jsonArray(rows, (row) => JSON.stringify(feedRecord(row)));
    yield `,"next_after":${nextAfter}}\n`;
    return;
  }
  if (format === 'csv') yield feedHeader('csv');
  const rowFormat = format === 'csv' ? 'csv' : 'jsonl';
  for (const row of rows) yield formatFeedRow(rowFormat, row);
}

/** `[a,b,...]` of `items`, one part per item. */
function* jsonArray<T>(items: readonly T[], stringify: (item: T) => string): Generator<string> {
  yield '[';
  yield* jsonItems(items, stringify, true);
  yield ']';
}

/** The items of a JSON array, one part each, a comma before each but the array's first. */
function* jsonItems<T>(items: readonly T[], stringify: (item: T) => string, first: boolean): Generator<string> {
  for (let i = 0; i < items.length; i += 1) yield (first && i === 0 ? '' : ',') + stringify(items[i] as T);
}

function waitParam(url: URL): number {
  const raw = url.searchParams.get('wait');
  if (raw === null) return 0;
  if (!/^\d{1,2}(\.\d{1,3})?$/.test(raw) || Number(raw) > MAX_WAIT_SECONDS) {
    throw new FeedHttpError(422, `wait must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}, got ${JSON.stringify(raw.slice(0, 40))}`);
  }
  return Math.round(Number(raw) * 1000);
}

async function current({ ctx, url, consumer, res }: Call): Promise<number> {
  const store = url.searchParams.get('store');
  if (store === null || store === '') throw new FeedHttpError(422, 'store is required: GET /feed/v1/current?store=<store_id>');
  if (!inScope(consumer, store)) throw new FeedHttpError(403, `store ${store.slice(0, 128)} is not one of ${consumer.name}'s stores`);
  const date = localDate(ctx.clock.now());
  // The seq is read before the answer starts (a failure is still a 500); the prices are read page by page as the
  // client takes the answer (store-snapshot.ts), so a page that fails later cuts the answer short instead.
  const snapshot = await openStoreSnapshot(ctx.db, store, date);
  const written = await streamAnswer(res, 200, 'application/json', snapshotBody(store, date, snapshot), { 'feed-database-id': ctx.databaseId }, answerOptions(ctx, consumer));
  return written ? 200 : 499;
}

/** What JSON.stringify of `{store_id, seq, date, items, upcoming}` gives, one part per price, read page by page. */
async function* snapshotBody(store: string, date: string, snapshot: StoreSnapshot): AsyncGenerator<string> {
  yield `{"store_id":${JSON.stringify(store)},"seq":${snapshot.seq},"date":${JSON.stringify(date)},"items":`;
  yield* jsonArrayOfPages(snapshot.current());
  yield ',"upcoming":';
  yield* jsonArrayOfPages(snapshot.upcoming());
  yield '}\n';
}

/** `[a,b,...]` of the items of `pages`, one part per item, each page read when the answer has taken the one before. */
async function* jsonArrayOfPages<T>(pages: AsyncIterable<readonly T[]>): AsyncGenerator<string> {
  let first = true;
  yield '[';
  for await (const page of pages) {
    yield* jsonItems(page, (item) => JSON.stringify(item), first);
    if (page.length > 0) first = false;
  }
  yield ']';
}

async function getOffset({ ctx, consumer, res }: Call): Promise<number> {
  sendJson(res, 200, { offset: (await consumerOffset(ctx.db, consumer.name)) ?? null });
  return 200;
}

const OffsetBody = z.object({ seq: z.int().min(0).max(Number.MAX_SAFE_INTEGER) });

async function putOffset({ ctx, req, consumer, res }: Call): Promise<number> {
  const body = parseBody(OffsetBody, await readJsonBody(req, MAX_BODY_BYTES));
  const stored = await advanceConsumer(ctx.db, consumer.name, body.seq);
  void ctx.seen.flush(); // the database is written now anyway
  sendJson(res, 200, { offset: stored.last_seq });
  return 200;
}

const AppliedBody = z.object({
  store_id: z.string().min(1).max(128),
  seq: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  applied_at: isoDateTime.nullable().optional(),
});

async function applied({ ctx, req, consumer, res }: Call): Promise<number> {
  const body = parseBody(AppliedBody, await readJsonBody(req, MAX_BODY_BYTES));
  if (!inScope(consumer, body.store_id)) throw new FeedHttpError(403, `store ${body.store_id} is not one of ${consumer.name}'s stores`);
  // A consumer of every store names its stores itself: only those the feed has rows of, or any string would become a
  // store in status, metrics and the deadline check, for good.
  if (consumer.stores === null && !(await feedHasStore(ctx.db, body.store_id))) {
    throw new FeedHttpError(
      422,
      `store ${body.store_id} has no row of its own in the feed: a consumer of every store confirms the stores it read prices of (a store with product-level prices only: list it in the consumer's stores)`,
    );
  }
  await recordApplied(ctx.db, consumer.name, body.store_id, body.seq, body.applied_at ?? null);
  void ctx.seen.flush();
  sendEmpty(res, 204);
  return 204;
}

function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  throw new FeedHttpError(422, `${where}${issue?.message ?? 'invalid body'}`);
}
