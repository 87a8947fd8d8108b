/**
 * Errors of the API client. Callers branch on `code` (stable strings) or on the class, never on message text.
 * Messages are written for a person and never contain the API key or any request header.
 */
import type { WaitWindow } from './rate-gate.ts';
import type { ValidationError } from './schemas/index.ts';

export const API_ERROR_CODES = {
  keyRejected: 'API_KEY_REJECTED', // 401: rotated, revoked or wrong key
  forbidden: 'API_FORBIDDEN', // 403
  notFound: 'API_NOT_FOUND', // 404
  conflict: 'API_CONFLICT', // 409
  validation: 'API_VALIDATION_FAILED', // 422
  clientError: 'API_CLIENT_ERROR', // other 4xx
  serverError: 'API_SERVER_ERROR', // 5xx after the retries allowed
  transport: 'API_TRANSPORT_ERROR', // no HTTP response (reset, refused, timeout, TLS)
  outcomeUnknown: 'API_OUTCOME_UNKNOWN', // a non-idempotent request may or may not have been applied
  localValidation: 'API_LOCAL_VALIDATION', // refused before sending (limit out of range, bad argument)
  badResponse: 'API_BAD_RESPONSE', // the body does not match the contract
  aborted: 'API_ABORTED', // the caller's AbortSignal fired
  waiting: 'API_WAITING', // a Retry-After window ends later than this command waits (check, status)
  responseLimit: 'API_RESPONSE_LIMIT', // a response over api.max_response_bytes, or past api.attempt_deadline_ms
} as const;
export type ApiErrorCode = (typeof API_ERROR_CODES)[keyof typeof API_ERROR_CODES];

export interface ApiErrorInit {
  operation: string;
  status?: number | undefined;
  retryable: boolean;
  detail?: ValidationError[] | undefined;
  body?: unknown;
  cause?: unknown;
}

export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly operation: string;
  /** The HTTP status, when a response was received. */
  readonly status: number | undefined;
  /** The parsed 422 detail (HTTPValidationError.detail), when the API sent one. */
  readonly detail: ValidationError[] | undefined;
  /** The parsed response body, for callers that need more than the status (e.g. a 409's conflict list). */
  readonly body: unknown;
  /** True when the same request may succeed later (5xx, transport, 429); false for 4xx and local errors. */
  readonly retryable: boolean;

  constructor(code: ApiErrorCode, message: string, init: ApiErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = code;
    this.operation = init.operation;
    this.status = init.status;
    this.detail = init.detail;
    this.body = init.body;
    this.retryable = init.retryable;
  }
}

/** 401: the key was rejected. Never retried; everything that needs the key must stop until a new key works. */
export class ApiKeyRejectedError extends ApiError {
  constructor(operation: string) {
    super(
      API_ERROR_CODES.keyRejected,
      'The API rejected the key (401): it was rotated, revoked or mistyped. Generate a new key in the web ' +
        'application (settings, integrations, API access) and put it in api.key or api.key_file.',
      { operation, status: 401, retryable: false },
    );
  }
}

export class ApiValidationError extends ApiError {
  constructor(operation: string, detail: ValidationError[], body: unknown) {
    const first = detail[0];
    const where = first ? ` ${first.loc.join('.')}: ${first.msg} (${first.type})` : '';
    const more = detail.length > 1 ? ` and ${detail.length - 1} more` : '';
    super(API_ERROR_CODES.validation, `${operation} was refused (422):${where}${more}`, {
      operation,
      status: 422,
      retryable: false,
      detail,
      body,
    });
  }
}

export class ApiTransportError extends ApiError {
  /** The undici/system error code (ECONNRESET, UND_ERR_SOCKET, ...), for logs and tests. */
  readonly transportCode: string | undefined;
  constructor(operation: string, transportCode: string | undefined, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(API_ERROR_CODES.transport, `${operation} failed without a response (${transportCode ?? 'error'}: ${reason})`, {
      operation,
      retryable: true,
      cause,
    });
    this.transportCode = transportCode;
  }
}

/** A non-idempotent create failed after the request may have reached the server; retrying could duplicate it. */
export class ApiOutcomeUnknownError extends ApiError {
  constructor(operation: string, cause: ApiError) {
    super(
      API_ERROR_CODES.outcomeUnknown,
      `${operation} may or may not have been applied (${cause.message}); it is not retried because ` +
        'retrying could create a duplicate',
      { operation, status: cause.status, retryable: false, cause },
    );
  }
}

/**
 * The API asked the agent to wait (Retry-After) longer than this command waits: `check` and `status` say so and
 * return instead of hanging on a long window. The daemon never sees it (it waits, within api.max_retry_after).
 */
export class ApiWaitError extends ApiError {
  readonly window: WaitWindow;
  constructor(window: WaitWindow, described: string) {
    super(
      API_ERROR_CODES.waiting,
      `The API asked the agent to wait ${described}: try again after that, or end the wait with \`pricing-agent api clear-wait\`.`,
      { operation: `${window.method} ${window.path}`, status: window.status, retryable: true },
    );
    this.window = window;
  }
}

/**
 * A response over api.max_response_bytes, or an attempt past api.attempt_deadline_ms (response-limits.ts): a failed
 * attempt for the retry policy, like a transport error, with a message that names the limit.
 */
export class ApiResponseLimitError extends ApiError {
  /** RESPONSE_TOO_LARGE or ATTEMPT_DEADLINE. */
  readonly limitCode: string;
  constructor(operation: string, limitCode: string, cause: Error) {
    super(API_ERROR_CODES.responseLimit, `${operation}: ${cause.message}`, { operation, retryable: true, cause });
    this.limitCode = limitCode;
  }
}

export class ApiLocalValidationError extends ApiError {
  constructor(operation: string, message: string) {
    super(API_ERROR_CODES.localValidation, `${operation}: ${message}`, { operation, retryable: false });
  }
}

/** Maps a final HTTP status (not 2xx, not 401, not 422) to an error. */
export function errorForStatus(operation: string, status: number, body: unknown): ApiError {
  const init = { operation, status, body, retryable: status >= 500 || status === 429 };
  const text = describeBody(body);
  if (status === 403) return new ApiError(API_ERROR_CODES.forbidden, `${operation}: the key has no access to this resource (403)${text}`, init);
  if (status === 404) return new ApiError(API_ERROR_CODES.notFound, `${operation}: not found (404)${text}`, init);
  if (status === 409) return new ApiError(API_ERROR_CODES.conflict, `${operation}: conflicts with the current state (409)${text}`, init);
  if (status >= 500) return new ApiError(API_ERROR_CODES.serverError, `${operation}: server error (${status})${text}`, init);
  return new ApiError(API_ERROR_CODES.clientError, `${operation}: request refused (${status})${text}`, init);
}

function describeBody(body: unknown): string {
  if (body && typeof body === 'object' && 'detail' in body) {
    const detail = (body).detail;
    if (typeof detail === 'string') return `: ${detail.slice(0, 200)}`;
    if (detail && typeof detail === 'object' && 'message' in detail && typeof detail.message === 'string') {
      return `: ${detail.message.slice(0, 200)}`;
    }
  }
  return '';
}
