/**
 * Builds the process's API client from a loaded Config: one dispatcher (proxy, CA, keep-alive, connection
 * bound), the key, the timeout, and logging hooks. Used by every command that talks to the API and by the daemon.
 */
import { existsSync } from 'node:fs';
import type { Dispatcher } from 'undici';
import { ApiClient } from './api/client.ts';
import { createDispatcher } from './api/dispatcher.ts';
import { loggingHooks } from './api/log-hooks.ts';
import type { PacingStore, TransportHooks } from './api/transport.ts';
import type { Clock } from './clock.ts';
import { caCertificates, maxRetryAfterMs, proxyFor, type ApiConfig, type Config } from './config/index.ts';
import type { Logger } from './log.ts';
import { recordWaitWindow, storedWaitWindow } from './store/api-state.ts';
import { openStateDb, stateLocation } from './store/open-state-db.ts';
import type { StateDb } from './store/state-db.ts';

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
   * The Retry-After window shared by every process on the state directory and kept across restarts (pacingOf or
   * openPacing). Without it a restart inside the window sent its first request early (found by the chaos suite),
   * and a one-shot command ignored the window the daemon was given (issue 11, failure 9).
   */
  pacing?: PacingStore;
  /** After a 401, refuse further requests with that key until another is set (the daemon). */
  refuseRejectedKey?: boolean;
  /** The longest a request waits for a Retry-After window; longer ones throw ApiWaitError (check, status). */
  maxGateWaitMs?: number;
}

/**
 * The shared Retry-After window in an open state database. Reading or writing it never fails the request: a
 * database that cannot be read (or written) costs at most an early request, and the debug log says so.
 */
export function pacingOf(db: StateDb, logger: Logger): PacingStore {
  return {
    window: async () => {
      try {
        return db.closed ? { window: null, clearedAtMs: 0 } : await storedWaitWindow(db);
      } catch (error) {
        logger.debug({ error: String(error) }, 'could not read the Retry-After window');
        return { window: null, clearedAtMs: 0 };
      }
    },
    recordWindow: async (window) => {
      try {
        if (!db.closed && !db.readonly) await recordWaitWindow(db, window);
      } catch (error) {
        logger.debug({ error: String(error) }, 'could not record the Retry-After window');
      }
    },
  };
}

/**
 * For commands that do not otherwise open the state database (check, status, jobs, exports, pull --history): the
 * shared window, from the database when the agent has one (opened for writing when the state directory allows it,
 * so a 429 this command is given holds for the daemon too; read-only otherwise). No database: this process only.
 */
export async function openPacing(config: Config, logger: Logger): Promise<{ pacing: PacingStore | undefined; close(): Promise<void> }> {
  if (!existsSync(stateLocation(config.state))) return { pacing: undefined, close: () => Promise.resolve() };
  for (const readonly of [false, true]) {
    try {
      const db = await openStateDb(config.state, { readonly });
      return { pacing: pacingOf(db, logger), close: () => db.close() };
    } catch (error) {
      logger.debug({ error: String(error), readonly }, 'could not open the state database for the Retry-After window');
    }
  }
  return { pacing: undefined, close: () => Promise.resolve() };
}

export function connectApi(api: ApiConfig, logger: Logger, options: ConnectOptions = {}): ApiConnection {
  const hooks: TransportHooks = options.hooks ?? {};
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
    attemptDeadlineMs: api.attempt_deadline_ms,
    maxResponseBytes: api.max_response_bytes,
    maxRetryAfterMs: maxRetryAfterMs(api),
    ...(options.maxGateWaitMs !== undefined ? { maxGateWaitMs: options.maxGateWaitMs } : {}),
    maxInFlight: api.max_connections,
    ...(options.pacing ? { pacing: options.pacing } : {}),
    ...(options.refuseRejectedKey ? { refuseRejectedKey: true } : {}),
    hooks: loggingHooks(logger, hooks),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
  });
  return { client, dispatcher, close: () => dispatcher.close() };
}

/** connectApi for a command without its own state database: the shared Retry-After window through openPacing. */
export async function connectApiWithPacing(config: Config, logger: Logger, options: Omit<ConnectOptions, 'pacing'> = {}): Promise<ApiConnection> {
  const shared = await openPacing(config, logger);
  const api = connectApi(config.api, logger, { ...options, ...(shared.pacing ? { pacing: shared.pacing } : {}) });
  return {
    ...api,
    async close() {
      await api.close();
      await shared.close();
    },
  };
}
