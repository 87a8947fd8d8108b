/**
 * Outbound proxy settings, as retail networks need them.
 *
 * - `api.proxy` in the file wins; when absent, `https_proxy` then `HTTPS_PROXY` from the environment (lowercase
 *   first, as curl and undici's EnvHttpProxyAgent do). An empty value means "no proxy", also over the environment.
 * - `api.no_proxy` (a list) in the file wins; when absent, `no_proxy` then `NO_PROXY` (comma or space separated).
 * - Matching follows undici's EnvHttpProxyAgent: `*` matches every host; `example.com` and `.example.com` match
 *   the host and its subdomains; `*.example.com` only subdomains; `host:port` only that port. Loopback hosts are
 *   never proxied (the sandbox on 127.0.0.1 must work on a server whose environment sets a proxy).
 *
 * The HTTP layer builds its dispatcher from `proxyFor(config.api)`: a ProxyAgent for a URL, a plain Agent for null.
 */
import type { Env } from './interpolate.ts';
import { isLoopbackHost } from './base-url.ts';

export interface ProxySettings {
  readonly base_url: string;
  /** Resolved proxy URL, or null for a direct connection. */
  readonly proxy: string | null;
  /** Hosts reached directly, lowercase, as written (`.example.com`, `*.corp`, `10.1.2.3`, `host:8443`). */
  readonly no_proxy: readonly string[];
}

/** Splits a NO_PROXY value: comma or whitespace separated, empty entries dropped, lowercase. */
export function parseNoProxy(text: string): string[] {
  return text
    .split(/[,\s]+/)
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
}

/** The proxy setting of the environment (used when the file has no `api.proxy`): the variable and its value. */
export function proxyFromEnv(env: Env): { readonly name: string; readonly value: string } {
  for (const name of ['https_proxy', 'HTTPS_PROXY']) {
    const value = env[name];
    if (value !== undefined) return { name, value };
  }
  return { name: 'HTTPS_PROXY', value: '' };
}

/** The no-proxy list, from the file or the environment. */
export function resolveNoProxy(configured: readonly string[] | undefined, env: Env): string[] {
  if (configured !== undefined) return configured.flatMap(parseNoProxy);
  return parseNoProxy(env['no_proxy'] ?? env['NO_PROXY'] ?? '');
}

/**
 * Checks a proxy URL; returns a message for a person, or undefined when it is usable. Never quotes the URL: it
 * may carry a password.
 */
export function checkProxyUrl(value: string): string | undefined {
  // host:port without a scheme parses as a URL whose scheme is the host (proxy.corp:3128 -> "proxy.corp:").
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return 'has no scheme: write it as http://host:port (or https://host:port)';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL (expected http://host:port or https://host:port)';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `must be an http:// or https:// URL, not ${url.protocol}//`;
  }
  if (url.hostname === '') return 'has no host';
  return undefined;
}

interface NoProxyEntry {
  readonly host: string;
  readonly port: number | undefined;
  /** `*.example.com`: subdomains only, not the apex. */
  readonly subdomainsOnly: boolean;
}

function parseEntry(entry: string): NoProxyEntry {
  let host = entry;
  let port: number | undefined;
  const bracketed = /^\[(.+)\](?::(\d+))?$/.exec(entry);
  if (bracketed?.[1] !== undefined) {
    host = bracketed[1];
    port = bracketed[2] === undefined ? undefined : Number(bracketed[2]);
  } else {
    const hostPort = /^([^:]+):(\d+)$/.exec(entry);
    if (hostPort?.[1] !== undefined && hostPort[2] !== undefined) {
      host = hostPort[1];
      port = Number(hostPort[2]);
    }
  }
  const subdomainsOnly = host.startsWith('*.');
  host = host.replace(/^\*?\./, '').replace(/\.$/, '');
  return { host, port, subdomainsOnly };
}

/** True when `hostname` (lowercase, IPv6 without brackets) on `port` is listed in `noProxy`. */
export function bypassesProxy(hostname: string, port: number, noProxy: readonly string[]): boolean {
  for (const raw of noProxy) {
    const entry = parseEntry(raw);
    if (entry.port !== undefined && entry.port !== port) continue;
    if (entry.host === '*') return true;
    if (!entry.subdomainsOnly && hostname === entry.host) return true;
    if (hostname.endsWith(`.${entry.host}`)) return true;
  }
  return false;
}

/** The proxy to use for the API at `base_url`, or null for a direct connection. */
export function proxyFor(settings: ProxySettings): string | null {
  if (settings.proxy === null) return null;
  const url = new URL(settings.base_url);
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isLoopbackHost(hostname)) return null;
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return bypassesProxy(hostname, port, settings.no_proxy) ? null : settings.proxy;
}
