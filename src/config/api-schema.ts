/**
 * The `api:` section: where the Public API is, the key, and how to reach it (timeouts, connections, proxy, CA).
 *
 * Parsing resolves everything the HTTP layer needs, so nothing downstream reads raw config or the environment:
 * the key is read from `key_file` when given (and the file's path kept for `readApiKey`), the proxy comes from
 * the file or HTTPS_PROXY/NO_PROXY, and the CA file is checked to hold certificates. The key-file and CA checks
 * read files, so this schema must be parsed with `safeParseAsync`.
 */
import { z } from 'zod';
import { registerSecret } from '../log.ts';
import { checkApiKey, looseModeWarning, readKeyFile } from './api-key.ts';
import { DEFAULT_ATTEMPT_DEADLINE_MS, DEFAULT_MAX_RESPONSE_BYTES } from '../api/response-limits.ts';
import { DEFAULT_MAX_RETRY_AFTER_MS } from '../api/retry-policy.ts';
import { normaliseBaseUrl } from './base-url.ts';
import { parseDuration } from './feed-schema.ts';
import { readCaFile } from './ca.ts';
import { checkProxyUrl, proxyFromEnv, resolveNoProxy } from './proxy.ts';
import { pathSchema } from './section-context.ts';
import type { SectionContext } from './section-context.ts';

/** The resolved `api` section of a Config. Paths are absolute. */
export interface ApiConfig {
  /** https (or http on loopback), no trailing slash: the client appends `/v1/...`. */
  readonly base_url: string;
  /** The key as loaded. Never log it (the logger redacts it anyway); re-read with `readApiKey` after a 401. */
  readonly key: string;
  /** The key file when the key came from one, else null. */
  readonly key_file: string | null;
  readonly timeout_ms: number;
  /** The whole of one attempt (connect, headers and body), ms. */
  readonly attempt_deadline_ms: number;
  /** The most of one response body that is read, bytes. */
  readonly max_response_bytes: number;
  /** The longest Retry-After honoured, as written (`15m`); in ms: `maxRetryAfterMs`. */
  readonly max_retry_after: string;
  readonly max_connections: number;
  /** Extra CA certificates (PEM), added to the default roots; see `caCertificates`. */
  readonly ca_file: string | null;
  /** Proxy URL from the file or HTTPS_PROXY, null for none; see `proxyFor` for the effective choice. */
  readonly proxy: string | null;
  /** Hosts reached without the proxy, from the file or NO_PROXY. */
  readonly no_proxy: readonly string[];
}

const baseUrl = z.string().transform((value, ctx) => {
  const result = normaliseBaseUrl(value);
  if (result.ok) return result.url;
  ctx.addIssue({ code: 'custom', message: result.message });
  return z.NEVER;
});

/**
 * api.max_retry_after: a duration (`15m`, `1h`, `90s`) from 1 s to 24 h, kept as written (as `config print` shows
 * it). The upper bound keeps every window far below Node's 24.8-day timer limit (the gate sleeps in slices anyway).
 */
const retryAfterCap = z.string().transform((value, ctx) => {
  const ms = parseDuration(value);
  if (ms !== undefined && ms >= 1_000 && ms <= 86_400_000) return value.trim();
  ctx.addIssue({ code: 'custom', message: 'expected a duration from 1s to 24h, e.g. 15m, 1h or 90s' });
  return z.NEVER;
});

/** api.max_retry_after in ms. */
export function maxRetryAfterMs(api: ApiConfig): number {
  return parseDuration(api.max_retry_after) ?? DEFAULT_MAX_RETRY_AFTER_MS;
}

/** An inline key, trimmed; empty means "not set" (e.g. `"${PRICING_API_KEY:-}"`). */
const inlineKey = z.string().transform((value, ctx) => {
  const key = value.trim();
  if (key === '') return undefined;
  const problem = checkApiKey(key);
  if (problem === undefined) {
    registerSecret(key);
    return key;
  }
  ctx.addIssue({ code: 'custom', message: problem });
  return z.NEVER;
});

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Checks a proxy URL and registers its password as a secret. Empty means "no proxy". */
function checkedProxy(value: string, report: (message: string) => void): string | null {
  const proxy = value.trim();
  if (proxy === '') return null;
  const problem = checkProxyUrl(proxy);
  if (problem !== undefined) {
    report(problem);
    return null;
  }
  // A proxy password is a secret like the key; URL-decoded as well, as it could appear in an error.
  const password = new URL(proxy).password;
  if (password !== '') {
    registerSecret(password);
    registerSecret(safeDecode(password));
  }
  return proxy;
}

/** `api.proxy` as written in the file: a URL, or empty for "no proxy, whatever the environment says". */
const proxyField = z.string().transform((value, ctx) => {
  let problem: string | undefined;
  const proxy = checkedProxy(value, (message) => (problem = message));
  if (problem === undefined) return proxy;
  ctx.addIssue({ code: 'custom', message: problem });
  return z.NEVER;
});

export function apiSchema(ctx: SectionContext) {
  const keyFile = pathSchema(ctx).transform(async (file, zctx) => {
    const result = await readKeyFile(file);
    if (!result.ok) {
      zctx.addIssue({ code: 'custom', message: result.message });
      return z.NEVER;
    }
    if (result.looseMode !== undefined) ctx.warn(['api', 'key_file'], looseModeWarning(file, result.looseMode));
    return { file, key: result.key };
  });

  const caFile = pathSchema(ctx).transform(async (file, zctx) => {
    const result = await readCaFile(file);
    if (!result.ok) zctx.addIssue({ code: 'custom', message: result.message });
    return file;
  });

  const fields = z.strictObject({
    base_url: baseUrl,
    /** Inline key, usually `${PRICING_API_KEY}`. */
    key: inlineKey.optional(),
    key_file: keyFile.optional(),
    timeout_ms: z.int().min(1_000).max(600_000).default(30_000), // 30 s between chunks of one request
    attempt_deadline_ms: z.int().min(1_000).max(3_600_000).default(DEFAULT_ATTEMPT_DEADLINE_MS), // 5 min per attempt
    max_response_bytes: z.int().min(1_048_576).max(2_147_483_647).default(DEFAULT_MAX_RESPONSE_BYTES), // 64 MiB
    max_retry_after: retryAfterCap.default(`${DEFAULT_MAX_RETRY_AFTER_MS / 60_000}m`), // 15 min
    max_connections: z.int().min(1).max(64).default(4),
    ca_file: caFile.optional(),
    proxy: proxyField.optional(),
    no_proxy: z.array(z.string()).optional(),
  });

  // Runs only when every field above is valid: the cross-field rules and the environment defaults.
  return fields.transform((api, zctx): ApiConfig => {
    const fail = (path: string[], message: string): never => {
      zctx.addIssue({ code: 'custom', message, path });
      return z.NEVER;
    };
    if (api.key !== undefined && api.key_file !== undefined) {
      return fail(['key_file'], 'set either api.key or api.key_file, not both');
    }
    const key = api.key ?? api.key_file?.key;
    if (key === undefined) return fail([], 'no API key: set api.key (usually ${PRICING_API_KEY}) or api.key_file');

    let proxy = api.proxy;
    if (proxy === undefined) {
      const env = proxyFromEnv(ctx.env);
      let problem: string | undefined;
      proxy = checkedProxy(env.value, (message) => (problem = message));
      if (problem !== undefined) return fail(['proxy'], `${env.name} from the environment ${problem}`);
    }

    return {
      base_url: api.base_url,
      key,
      key_file: api.key_file?.file ?? null,
      timeout_ms: api.timeout_ms,
      attempt_deadline_ms: api.attempt_deadline_ms,
      max_response_bytes: api.max_response_bytes,
      max_retry_after: api.max_retry_after,
      max_connections: api.max_connections,
      ca_file: api.ca_file ?? null,
      proxy,
      no_proxy: resolveNoProxy(api.no_proxy, ctx.env),
    };
  });
}
