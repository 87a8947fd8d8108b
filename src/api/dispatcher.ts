/**
 * The process's one undici dispatcher: keep-alive connections to the API, bounded by `api.max_connections`,
 * through an HTTPS proxy when one is configured (HTTPS_PROXY / NO_PROXY, as retail networks need), trusting extra
 * CA certificates from a file on top of the system roots. Passed explicitly as `dispatcher` on every call: library
 * notes, undici — a call without it can go through Node's bundled undici and break multipart uploads.
 */
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Agent, EnvHttpProxyAgent, type Dispatcher } from 'undici';

export interface DispatcherOptions {
  /** Connections per origin (api.max_connections). */
  maxConnections: number;
  /** Proxy URL for HTTPS requests; undefined or null for a direct connection. */
  proxyUrl?: string | null | undefined;
  /** NO_PROXY list (comma separated hosts/domains). */
  noProxy?: string | undefined;
  /** PEM file with extra CA certificates, added to the system roots (never replacing them). */
  caFile?: string | null | undefined;
  /** Idle keep-alive sockets are closed after this long; below typical server idle timeouts (5 s). */
  keepAliveTimeoutMs?: number;
}

export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 4_000; // 4 s

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const ca = options.caFile ? [...rootCertificates, readFileSync(options.caFile, 'utf8')] : undefined;
  const common = {
    connections: options.maxConnections,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
    allowH2: false, // HTTP/1.1 keep-alive; undici 8 turns h2 on by default (library notes)
    ...(ca ? { connect: { ca } } : {}),
  };
  if (options.proxyUrl) {
    return new EnvHttpProxyAgent({
      ...common,
      httpProxy: options.proxyUrl,
      httpsProxy: options.proxyUrl,
      noProxy: options.noProxy ?? '',
      ...(ca ? { requestTls: { ca } } : {}),
    });
  }
  return new Agent(common);
}
