/**
 * Builds the process's API client from a loaded Config: one dispatcher (proxy, CA, keep-alive, connection
 * bound), the key, the timeout, and logging hooks. Used by every command that talks to the API and by the daemon.
 */
import type { Dispatcher } from 'undici';
import { ApiClient } from './api/client.ts';
import { createDispatcher } from './api/dispatcher.ts';
import { loggingHooks } from './api/log-hooks.ts';
import type { TransportHooks } from './api/transport.ts';
import type { Clock } from './clock.ts';
import { caCertificates, proxyFor, type ApiConfig } from './config/index.ts';
import type { Logger } from './log.ts';

export interface ApiConnection {
  client: ApiClient;
  dispatcher: Dispatcher;
  close(): Promise<void>;
}

export function connectApi(api: ApiConfig, logger: Logger, options: { clock?: Clock; hooks?: TransportHooks; maxAttempts?: number } = {}): ApiConnection {
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

    hooks: loggingHooks(logger, options.hooks),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
  });
  return { client, dispatcher, close: () => dispatcher.close() };
}
