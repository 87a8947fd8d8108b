/**
 * Builds the process's API client from a loaded Config: one dispatcher (proxy, CA, keep-alive, connection
 * bound), the key, the timeout, and logging hooks. Used by every command that talks to the API and by the daemon.
 */
import { readFileSync } from 'node:fs';
import type { Dispatcher } from 'undici';
import { ApiClient } from './api/client.ts';
import { createDispatcher } from './api/dispatcher.ts';
import { loggingHooks } from './api/log-hooks.ts';
import type { TransportHooks } from './api/transport.ts';
import { writeFileAtomicSync } from './atomic-file.ts';
import type { Clock } from './clock.ts';
import { caCertificates, proxyFor, type ApiConfig } from './config/index.ts';
import type { Logger } from './log.ts';

export interface ApiConnection {
  client: ApiClient;
  dispatcher: Dispatcher;
  close(): Promise<void>;
}

export interface ConnectOptions {
  clock?: Clock;
  hooks?: TransportHooks;
  maxAttempts?: number;
  /**
   * Where a Retry-After outlives the process (the daemon: `<state.dir>/rate-limit-until`): read at start and written
   * on every 429, so that a restarted agent (a crash, SIGKILL, systemd's restart) does not send before the moment
   * the API named. Without it a restart inside the window sent its first request early (found by the chaos suite).
   */
  rateLimitFile?: string;
  /** After a 401, refuse further requests with that key until another is set (the daemon). */
  refuseRejectedKey?: boolean;
}

/** Epoch ms stored in `file`, or 0 when there is none (or it cannot be read: at worst one early request). */
function readRetryAfter(file: string): number {
  try {
    const until = Number(readFileSync(file, 'utf8').trim());
    return Number.isFinite(until) ? until : 0;
  } catch {
    return 0;
  }
}

function writeRetryAfter(file: string, untilMs: number, logger: Logger): void {
  try {
    // Durable: the window must outlive a power cut as well as a crash, or the restarted agent sends early.
    writeFileAtomicSync(file, `${untilMs}\n`);
  } catch (error) {
    logger.debug({ error: String(error) }, 'could not record the Retry-After window');
  }
}

export function connectApi(api: ApiConfig, logger: Logger, options: ConnectOptions = {}): ApiConnection {
  const file = options.rateLimitFile;
  const hooks: TransportHooks =
    file === undefined
      ? (options.hooks ?? {})
      : {
          ...options.hooks,
          onRetryAfter: (e) => {
            writeRetryAfter(file, e.untilMs, logger);
            options.hooks?.onRetryAfter?.(e);
          },
        };
  const dispatcher = createDispatcher({
    maxConnections: api.max_connections,
    proxyUrl: proxyFor(api),
    ca: caCertificates(api),
  });
  const client = new ApiClient({
    baseUrl: api.base_url,
    apiKey: api.key,
    dispatcher,
    timeoutMs: api.timeout_ms,
    maxInFlight: api.max_connections,
    ...(file === undefined ? {} : { rateLimitedUntil: readRetryAfter(file) }),
    ...(options.refuseRejectedKey ? { refuseRejectedKey: true } : {}),
    hooks: loggingHooks(logger, hooks),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
  });
  return { client, dispatcher, close: () => dispatcher.close() };
}
