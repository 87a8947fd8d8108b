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
  ApiResponseLimitError,
  ApiTransportError,
  ApiValidationError,
  API_ERROR_CODES,
  errorForStatus,
} from './errors.ts';
import { buildPath, OPERATIONS, retryClassOf, type OperationName } from './operations.ts';
import { backoffDelay, DEFAULT_MAX_RETRY_AFTER_MS, neverReachedServer, parseRetryAfter, shouldRetry, type Failure } from './retry-policy.ts';
import { GateClosedError, gatedDispatcher } from './gate-interceptor.ts';
import { RateGate, type SharedWindow, type WaitWindow } from './rate-gate.ts';
import {
  DEFAULT_ATTEMPT_DEADLINE_MS,
  DEFAULT_MAX_RESPONSE_BYTES,
  deadlineError,
  readBodyLimited,
  ResponseLimitError,
} from './response-limits.ts';
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
  /** A 429 (or a 503 with Retry-After) closed the gate until `untilMs` (epoch ms). */
  onRetryAfter?(event: { operation: OperationName; untilMs: number; status: number }): void;
  /**
   * Runs just before each attempt goes on the wire; throwing an ApiError refuses it (nothing is sent). HA: a node
   * that is not the active one, or whose lease may have ended (it was paused), sends nothing.
   */
  beforeSend?(event: { operation: OperationName }): void;
}

/**
 * Where the Retry-After window is shared between the processes of an agent (src/store/api-state.ts through
 * connectApi): read at every pass of the gate (and every few seconds while waiting: a clear-wait ends the wait),
 * written at every 429 or 503 with Retry-After. Errors are the store's to swallow.
 */
export interface PacingStore {
  window(): Promise<SharedWindow>;
  recordWindow(window: WaitWindow): Promise<void>;
}

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  dispatcher: Dispatcher;
  /** Headers and body timeout per attempt (api.timeout_ms): a gap between chunks. */
  timeoutMs?: number;
  /** The whole of one attempt: connect, headers and body (api.attempt_deadline_ms). */
  attemptDeadlineMs?: number;
  /** The most of a response body that is read (api.max_response_bytes). */
  maxResponseBytes?: number;
  /** The longest Retry-After honoured (api.max_retry_after). */
  maxRetryAfterMs?: number;
  /**
   * The longest a request waits at the gate; a longer window throws ApiWaitError at once. `check` and `status` say
   * the window instead of waiting for it. Default: no bound (the window itself is bounded by maxRetryAfterMs).
   */
  maxGateWaitMs?: number;
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
  /** Since when requests get no answer at all (transport errors), and the last one's cause; null once one is answered. */
  #unreachable: { since: number; error: ApiError } | null = null;
  readonly #refuseRejectedKey: boolean;
  readonly #dispatcher: Dispatcher;
  readonly #timeoutMs: number;
  readonly #attemptDeadlineMs: number;
  readonly #maxResponseBytes: number;
  readonly #maxRetryAfterMs: number;
  readonly #maxGateWaitMs: number;
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
    this.#attemptDeadlineMs = options.attemptDeadlineMs ?? DEFAULT_ATTEMPT_DEADLINE_MS;
    this.#maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
    this.#maxGateWaitMs = options.maxGateWaitMs ?? Number.POSITIVE_INFINITY;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#hooks = options.hooks ?? {};
    this.#pacing = options.pacing;
    const pacing = options.pacing;
    this.#gate = new RateGate(this.#clock, pacing ? () => pacing.window() : undefined, this.#maxRetryAfterMs);
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

  /** The Retry-After window in force as last seen, with its reason (/readyz, the console); null when none. */
  get waitWindow(): WaitWindow | null {
    return this.#gate.current();
  }

  /**
   * Since when (epoch ms) the API has answered none of the requests sent, and why the last one got no answer; null
   * when the last request was answered (whatever its status) or none failed so. For the console and status: the
   * agent stays ready (its feed serves the tills whether or not the API answers).
   */
  get unreachable(): { since: number; error: ApiError } | null {
    return this.#unreachable;
  }

  /** Reads the shared window again (a clear-wait, another process's 429) and returns the one in force. */
  refreshWaitWindow(): Promise<WaitWindow | null> {
    return this.#gate.refresh();
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
        this.#unreachable = null;
        this.#hooks.onResponse?.({ operation, status: response.status, attempt, durationMs: this.#clock.now() - started });
        if (response.status < 300) return response;
        // 429: refused without processing; the gate was closed in #attempt. Wait for Retry-After (within
        // api.max_retry_after) at the gate and try again; no attempt used. A 503 with Retry-After closed the gate
        // too, but uses an attempt: it is retried after the backoff, and then waits at the gate for the rest of
        // its window, so never sooner than either.
        if (response.status === 429) continue;
        error = this.#statusError(operation, response);
        failure = { kind: 'status', status: response.status };
      } catch (cause) {
        if (cause instanceof ApiError) throw cause; // aborted at the gate, or the key is known to be rejected
        // The gate closed after the pass, before the request was written: nothing was sent; wait at the gate again.
        if (cause instanceof GateClosedError) continue;
        if (req.signal?.aborted) throw abortError(operation, req.signal.reason);
        if (cause instanceof ResponseLimitError) {
          error = new ApiResponseLimitError(operation, cause.code, cause);
          failure = { kind: 'transport', code: cause.code };
        } else {
          const code = transportCode(cause);
          error = new ApiTransportError(operation, code, cause);
          failure = { kind: 'transport', code };
          this.#unreachable = { since: this.#unreachable?.since ?? this.#clock.now(), error };
        }
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
      return await this.#gate.pass(signal, this.#maxGateWaitMs);
    } catch (error) {
      if (error instanceof ApiError) throw error; // a window longer than this command waits (ApiWaitError)
      throw abortError(operation, signal?.reason);
    }
  }

  /**
   * One attempt within api.attempt_deadline_ms (a real timer, like undici's own timeouts). The caller's signal still
   * cancels; the deadline turns into a ResponseLimitError naming its key.
   */
  async #attempt(req: ApiRequest, url: string, key: string): Promise<ApiResponse> {
    const deadline = AbortSignal.timeout(this.#attemptDeadlineMs);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
    try {
      return await this.#attemptWithin(req, url, key, signal);
    } catch (error) {
      if (deadline.aborted && !req.signal?.aborted) throw deadlineError(this.#what(req), this.#attemptDeadlineMs);
      throw error;
    }
  }

  async #attemptWithin(req: ApiRequest, url: string, key: string, signal: AbortSignal): Promise<ApiResponse> {
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
      signal,
    });
    const retryAfter = response.headers['retry-after'];
    if (response.statusCode === 429 || (response.statusCode === 503 && retryAfter !== undefined)) {
      // Closed as soon as the status is known, before the body is read: every tick spent reading could let another
      // request through the gate. A 503 with Retry-After (a proxy in front of the API sends it) is honoured too.
      const now = this.#clock.now();
      const window: WaitWindow = {
        untilMs: now + parseRetryAfter(retryAfter, now, this.#maxRetryAfterMs, serverDateMs(response.headers.date)),
        status: response.statusCode,
        method: OPERATIONS[req.operation].method,
        path: buildPath(req.operation, req.id),
        recordedAtMs: now,
      };
      this.#gate.closeUntil(window);
      void this.#pacing?.recordWindow(window);
      this.#hooks.onRetryAfter?.({ operation: req.operation, untilMs: this.#gate.openAt, status: response.statusCode });
    }
    const text = await readBodyLimited(response.body, this.#maxResponseBytes, response.headers['content-length'], this.#what(req));
    const dateMs = serverDateMs(response.headers.date);
    return {
      status: response.statusCode,
      headers: response.headers,
      body: parseBody(text, response.headers['content-type']),
      date: dateMs === undefined ? null : new Date(dateMs),
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

  /** "GET /v1/auth/verify", for messages (no query: a cursor says nothing to a person). */
  #what(req: ApiRequest): string {
    return `${OPERATIONS[req.operation].method} ${buildPath(req.operation, req.id)}`;
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

/** The response's `Date` header (the server's clock) in milliseconds, or undefined when it has none that reads. */
function serverDateMs(header: string | string[] | undefined): number | undefined {
  const ms = typeof header === 'string' ? Date.parse(header) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms;
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
