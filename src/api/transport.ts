/**
 * One request to the API, with the retry policy applied: the rate gate first, then the request, then the decision
 * (return, retry after a backoff, wait for Retry-After, or throw a typed error). Every response body is read, so no
 * connection is held by an unread body.
 */
import { basename } from 'node:path';
import { openAsBlob } from 'node:fs';
import { FormData, request, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'undici/types/header.js';
import { systemClock, type Clock } from '../clock.ts';
import { AGENT_VERSION } from '../version.ts';
import {
  ApiError,
  ApiKeyRejectedError,
  ApiOutcomeUnknownError,
  ApiTransportError,
  ApiValidationError,
  API_ERROR_CODES,
  errorForStatus,
} from './errors.ts';
import { buildPath, OPERATIONS, retryClassOf, type OperationName } from './operations.ts';
import { backoffDelay, neverReachedServer, parseRetryAfter, shouldRetry, type Failure } from './retry-policy.ts';
import { GateClosedError, gatedDispatcher } from './gate-interceptor.ts';
import { RateGate } from './rate-gate.ts';
import { RequestSlots } from './request-slots.ts';
import { HTTPValidationError, RETRY_MAX_ATTEMPTS } from './schemas/index.ts';
import { parseJsonText } from '../json-text.ts';

export type QueryValue = string | number | boolean | undefined | null;

export interface ApiRequest {
  operation: OperationName;
  id?: string | number;
  query?: Record<string, QueryValue>;
  /** JSON body. */
  json?: unknown;
  /** Path of a CSV file to upload as the multipart part `file`; re-read from disk on every attempt. */
  uploadFile?: string;
  signal?: AbortSignal | undefined;
}

export interface ApiResponse {
  status: number;
  body: unknown;
  headers: IncomingHttpHeaders;
  /** The server's Date header, if it sent one. */
  date: Date | null;
}

/** Observers for metrics and logs; none of them sees the key. */
export interface TransportHooks {
  onResponse?(event: { operation: OperationName; status: number; attempt: number; durationMs: number }): void;
  onRetry?(event: { operation: OperationName; attempt: number; delayMs: number; reason: string }): void;
  onRateLimited?(event: { operation: OperationName; waitMs: number }): void;
  onKeyRejected?(event: { operation: OperationName }): void;
  /** A 429 closed the gate until `untilMs` (epoch ms). */
  onRetryAfter?(event: { operation: OperationName; untilMs: number }): void;
  /**
   * Runs just before each attempt goes on the wire; throwing an ApiError refuses it (nothing is sent). HA: a node
   * that is not the active one, or whose lease may have ended (it was paused), sends nothing.
   */
  beforeSend?(event: { operation: OperationName }): void;
}

/**
 * Where the Retry-After window is shared between the processes of an agent (src/store/api-state.ts through
 * connectApi): read at every pass of the gate, written at every 429. Errors are the store's to swallow.
 */
export interface PacingStore {
  rateLimitedUntil(): Promise<number>;
  recordRateLimitedUntil(untilMs: number): Promise<void>;
}

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  dispatcher: Dispatcher;
  /** Headers and body timeout per attempt (api.timeout_ms). */
  timeoutMs?: number;
  clock?: Clock;
  random?: () => number;
  hooks?: TransportHooks;
  /** Attempts per request on retryable failures; the spec's 5 unless a diagnosis wants the state now (check). */
  maxAttempts?: number;
  /** Requests on the wire at once: the dispatcher's connection limit (api.max_connections). Default: no bound. */
  maxInFlight?: number;
  /** The Retry-After window shared with the agent's other processes and its next start. Default: this process only. */
  pacing?: PacingStore;
  /**
   * After a 401, refuse (locally, with the same ApiKeyRejectedError) every further request with that key until
   * setApiKey gives another one. The daemon sets it: its other workers (the rest of a file, a job's next page) kept
   * sending the rejected key after the first 401 (found by the chaos suite). Default false.
   */
  refuseRejectedKey?: boolean;
}

export const DEFAULT_TIMEOUT_MS = 30_000; // 30 s

export class ApiTransport {
  readonly #baseUrl: string;
  #apiKey: string;
  /** The last key the API answered 401 to: not sent again when `refuseRejectedKey` (a rejected key never comes back). */
  #rejectedKey: string | null = null;
  readonly #refuseRejectedKey: boolean;
  readonly #dispatcher: Dispatcher;
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #hooks: TransportHooks;
  readonly #gate: RateGate;
  readonly #maxAttempts: number;
  readonly #slots: RequestSlots;
  readonly #pacing: PacingStore | undefined;
  readonly #userAgent = `pricing-agent/${AGENT_VERSION} node/${process.versions.node}`;

  constructor(options: TransportOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#hooks = options.hooks ?? {};
    this.#pacing = options.pacing;
    const pacing = options.pacing;
    this.#gate = new RateGate(this.#clock, pacing ? () => pacing.rateLimitedUntil() : undefined);
    this.#dispatcher = gatedDispatcher(options.dispatcher, () => this.#gate.isClosed());
    this.#maxAttempts = options.maxAttempts ?? RETRY_MAX_ATTEMPTS;
    this.#refuseRejectedKey = options.refuseRejectedKey ?? false;
    this.#slots = new RequestSlots(options.maxInFlight ?? Number.POSITIVE_INFINITY);
  }

  get baseUrl(): string {
    return this.#baseUrl;
  }

  /** A new key (re-read key file, SIGHUP). The rate gate stays: limits are per key, but waiting is harmless. */
  setApiKey(apiKey: string): void {
    this.#apiKey = apiKey;
  }

  /** Epoch ms until which requests wait because of a 429 (for status output and tests). */
  get rateLimitedUntil(): number {
    return this.#gate.openAt;
  }

  async send(req: ApiRequest): Promise<ApiResponse> {
    const { operation } = req;
    const retry = retryClassOf(operation, req.query ?? {});
    const url = this.#url(req);
    let attempt = 1;
    for (;;) {
      // A slot first, then the gate: the request goes on the wire at once, never from a queue behind a 429.
      const release = await this.#slot(operation, req.signal);
      let failure: Failure;
      let error: ApiError;
      try {
        const waited = await this.#pass(operation, req.signal);
        if (waited > 0) this.#hooks.onRateLimited?.({ operation, waitMs: waited });
        // Requests still going after a 401 elsewhere (the rest of a file, a job's next page) stop here instead of
        // sending the rejected key again.
        const key = this.#apiKey;
        if (this.#refuseRejectedKey && key === this.#rejectedKey) throw new ApiKeyRejectedError(operation);
        this.#hooks.beforeSend?.({ operation });
        const started = this.#clock.now();
        const response = await this.#attempt(req, url, key);
        if (response.status === 401) this.#rejectedKey = key;
        this.#hooks.onResponse?.({ operation, status: response.status, attempt, durationMs: this.#clock.now() - started });
        if (response.status < 300) return response;
        // 429: refused without processing; the gate was closed in #attempt. Wait for Retry-After (however long) at
        // the gate and try again; no attempt used.
        if (response.status === 429) continue;
        error = this.#statusError(operation, response);
        failure = { kind: 'status', status: response.status };
      } catch (cause) {
        if (cause instanceof ApiError) throw cause; // aborted at the gate, or the key is known to be rejected
        // The gate closed after the pass, before the request was written: nothing was sent; wait at the gate again.
        if (cause instanceof GateClosedError) continue;
        if (req.signal?.aborted) throw abortError(operation, req.signal.reason);
        const code = transportCode(cause);
        error = new ApiTransportError(operation, code, cause);
        failure = { kind: 'transport', code };
      } finally {
        release();
      }
      if (!shouldRetry(retry, failure, attempt, this.#maxAttempts)) {
        const mayHaveBeenApplied = failure.kind === 'status' || !neverReachedServer(failure.code);
        if (retry === 'unsafe' && error.retryable && mayHaveBeenApplied) throw new ApiOutcomeUnknownError(operation, error);
        throw error;
      }
      const delayMs = backoffDelay(attempt, this.#random);
      this.#hooks.onRetry?.({ operation, attempt, delayMs, reason: error.message });
      try {
        await this.#clock.sleep(delayMs, req.signal);
      } catch {
        throw abortError(operation, req.signal?.reason);
      }
      attempt += 1;
    }
  }

  async #slot(operation: OperationName, signal: AbortSignal | undefined): Promise<() => void> {
    try {
      return await this.#slots.acquire(signal);
    } catch {
      throw abortError(operation, signal?.reason);
    }
  }

  async #pass(operation: OperationName, signal: AbortSignal | undefined): Promise<number> {
    try {
      return await this.#gate.pass(signal);
    } catch {
      throw abortError(operation, signal?.reason);
    }
  }

  async #attempt(req: ApiRequest, url: string, key: string): Promise<ApiResponse> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${key}`,
      'user-agent': this.#userAgent,
      accept: 'application/json',
    };
    let body: string | FormData | undefined;
    if (req.uploadFile !== undefined) {
      // Built anew for every attempt: the Blob streams from disk, so memory does not grow with the file.
      body = new FormData();
      body.append('file', await openAsBlob(req.uploadFile, { type: 'text/csv' }), basename(req.uploadFile));
    } else if (req.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(req.json);
    }
    const response = await request(url, {
      method: OPERATIONS[req.operation].method,
      headers,
      body,
      dispatcher: this.#dispatcher,
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
      signal: req.signal,
    });
    if (response.statusCode === 429) {
      // Closed as soon as the status is known, before the body is read: every tick spent reading could let another
      // request through the gate.
      this.#gate.closeUntil(this.#clock.now() + parseRetryAfter(response.headers['retry-after'], this.#clock.now()));
      void this.#pacing?.recordRateLimitedUntil(this.#gate.openAt);
      this.#hooks.onRetryAfter?.({ operation: req.operation, untilMs: this.#gate.openAt });
    }
    const text = await response.body.text();
    const date = typeof response.headers.date === 'string' ? new Date(response.headers.date) : null;
    return {
      status: response.statusCode,
      headers: response.headers,
      body: parseBody(text, response.headers['content-type']),
      date: date && !Number.isNaN(date.getTime()) ? date : null,
    };
  }

  #statusError(operation: OperationName, response: ApiResponse): ApiError {
    if (response.status === 401) {
      this.#hooks.onKeyRejected?.({ operation });
      return new ApiKeyRejectedError(operation);
    }
    if (response.status === 422) {
      const parsed = HTTPValidationError.safeParse(response.body);
      return new ApiValidationError(operation, parsed.success ? parsed.data.detail : [], response.body);
    }
    return errorForStatus(operation, response.status, response.body);
  }

  #url(req: ApiRequest): string {
    const path = buildPath(req.operation, req.id);
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(req.query ?? {})) {
      if (value !== undefined && value !== null) params.append(key, String(value));
    }
    const search = params.size > 0 ? `?${params.toString()}` : '';
    return `${this.#baseUrl}${path}${search}`;
  }
}

function parseBody(text: string, contentType: string | string[] | undefined): unknown {
  if (text === '') return null;
  const type = Array.isArray(contentType) ? contentType[0] : contentType;
  if (type?.includes('json')) {
    try {
      // Not JSON.parse itself: V8 can misread an escaped key, e.g. a custom column named `"` (json-text.ts).
      return parseJsonText(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** The error's code, or the deepest one in its cause chain when it has none of its own that says more. */
function transportCode(cause: unknown): string | undefined {
  let code: string | undefined;
  let current: unknown = cause;
  for (let depth = 0; current && typeof current === 'object' && depth < 6; depth += 1) {
    const own = (current as { code?: unknown }).code;
    if (typeof own === 'string') code = own;
    current = (current as { cause?: unknown }).cause;
  }
  return code;
}

function abortError(operation: string, reason: unknown): ApiError {
  return new ApiError(API_ERROR_CODES.aborted, `${operation} was cancelled`, { operation, retryable: true, cause: reason });
}
