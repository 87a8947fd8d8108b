/**
 * The process's one undici dispatcher: keep-alive connections to the API, bounded by `api.max_connections`,
 * through an HTTPS proxy when one applies (the config decides, from api.proxy / HTTPS_PROXY and NO_PROXY), trusting
 * extra CA certificates on top of the system roots. Passed explicitly as `dispatcher` on every call: library notes,
 * undici — a call without it can go through Node's bundled undici and break multipart uploads.
 */
import { Agent, ProxyAgent, type Dispatcher } from 'undici';

export interface DispatcherOptions {
  /** Connections per origin (api.max_connections). */
  maxConnections: number;
  /** Proxy URL to reach the API through, or null/undefined for a direct connection. */
  proxyUrl?: string | null | undefined;
  /** Trusted CA certificates (PEM), the system roots included; undefined for Node's defaults. */
  ca?: string[] | undefined;
  /** Idle keep-alive sockets are closed after this long, below typical server idle timeouts (5 s). */
  keepAliveTimeoutMs?: number;
}

export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 4_000; // 4 s

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const common = {
    connections: options.maxConnections,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
    allowH2: false, // HTTP/1.1 keep-alive; undici 8 turns h2 on by default (library notes)
  };
  const tls = options.ca ? { ca: options.ca } : undefined;
  if (options.proxyUrl) {
    // TLS to the API goes through the proxy's CONNECT tunnel: the extra CAs apply to that inner connection.
    return new ProxyAgent({ ...common, uri: options.proxyUrl, ...(tls ? { requestTls: tls } : {}) });
  }
  return new Agent({ ...common, ...(tls ? { connect: tls } : {}) });
}
