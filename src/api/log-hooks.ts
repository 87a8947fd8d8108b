/**
 * What the client tells the log. Quiet when all is well: responses at debug, a retry at debug (it is expected and
 * handled), a Retry-After wait at info, a rejected key at error. No field can hold the key: the hooks only see the
 * operation, statuses and durations.
 */
import type { Logger } from '../log.ts';
import type { TransportHooks } from './transport.ts';

export function loggingHooks(logger: Logger, next: TransportHooks = {}): TransportHooks {
  return {
    onResponse: (e) => {
      logger.debug({ operation: e.operation, status: e.status, attempt: e.attempt, duration_ms: e.durationMs }, 'api response');
      next.onResponse?.(e);
    },
    onRetry: (e) => {
      logger.debug({ operation: e.operation, attempt: e.attempt, delay_ms: e.delayMs, error: e.reason }, 'api retry');
      next.onRetry?.(e);
    },
    onRateLimited: (e) => {
      logger.info({ operation: e.operation, wait_ms: e.waitMs }, 'api rate limit: waited for Retry-After');
      next.onRateLimited?.(e);
    },
    onRetryAfter: (e) => {
      // One line per window: the server's advice, as bounded by api.max_retry_after.
      logger.info({ operation: e.operation, status: e.status, until: new Date(e.untilMs).toISOString() }, 'api asked to wait (Retry-After)');
      next.onRetryAfter?.(e);
    },
    beforeSend: (e) => next.beforeSend?.(e),
    onKeyRejected: (e) => {
      logger.error({ operation: e.operation }, 'api key rejected (401): put a new key in api.key or api.key_file');
      next.onKeyRejected?.(e);
    },
  };
}
