/**
 * The `feed:` section: the feed API for POS systems on the network (src/feed/, docs/feed.md). Off by default.
 *
 * Secrets: a consumer's token is never in this file. `token_file` names a file holding it (read here, hashed, and
 * registered with the logger's secret filter; only the SHA-256 digest is kept), or `token_sha256` is the digest
 * itself. Either way the loaded Config holds digests only, so `config print` and every error show no token.
 *
 * A listen address other than loopback needs TLS: tokens and prices would otherwise cross the network in clear
 * text. The certificate and key are loaded and matched here, so `config validate` finds a bad pair, not the first
 * POS at 3 a.m. (the daemon loads them again at start and on SIGHUP, so a renewed certificate needs no restart).
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { z } from 'zod';
import { registerSecret } from '../log.ts';
import { looseModeWarning, readSecretFile } from './api-key.ts';
import { isLoopbackHost } from './base-url.ts';
import type { DeepReadonly } from './schema.ts';
import { pathSchema } from './section-context.ts';
import type { SectionContext } from './section-context.ts';

export const DEFAULT_FEED_PORT = 9465;
export const DEFAULT_APPLY_DEADLINE = '2h';
/** Connections from one client address (feed.max_connections_per_address). */
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 256;
/** Requests of one consumer in progress at once (feed.max_requests_per_consumer). */
export const DEFAULT_MAX_REQUESTS_PER_CONSUMER = 8;

/** Consumer names appear in logs, status and metric labels: a short, plain name. */
const CONSUMER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** RFC 6750 token68 characters, 32 at least: `openssl rand -hex 32` gives 64. */
const TOKEN = /^[A-Za-z0-9._~+/=-]{32,512}$/;
const SHA256_HEX = /^[0-9a-fA-F]{64}$/;

/** `host:port`, `[v6]:port` or `:port` (all interfaces). */
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/** Parses `feed.listen`; undefined when it is not an address. */
export function parseListen(value: string): ListenAddress | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]*)):(\d{1,5})$/.exec(value.trim());
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port > 65_535) return undefined;
  const host = match[1] ?? (match[2] === '' ? '0.0.0.0' : (match[2] ?? ''));
  return { host, port };
}

/** `2h`, `90m`, `1h30m`, `45s`, `1d`: milliseconds, or undefined when it is not a duration. */
export function parseDuration(value: string): number | undefined {
  const match = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(value.trim());
  if (!match || value.trim() === '') return undefined;
  const [d, h, m, s] = match.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number];
  return (((d * 24 + h) * 60 + m) * 60 + s) * 1000;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

const listenSchema = z.string().transform((value, ctx) => {
  const address = parseListen(value);
  if (address) return `${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
  ctx.addIssue({ code: 'custom', message: 'expected host:port, e.g. 0.0.0.0:9465, [::]:9465 or 127.0.0.1:9465' });
  return z.NEVER;
});

const duration = z.string().transform((value, ctx) => {
  const ms = parseDuration(value);
  if (ms !== undefined && ms >= 60_000) return value.trim();
  ctx.addIssue({ code: 'custom', message: 'expected a duration of at least a minute, e.g. 2h, 90m or 1h30m' });
  return z.NEVER;
});

const storeId = z.string().trim().min(1).max(128);

function tlsSchema(ctx: SectionContext) {
  return z
    .strictObject({
      /** PEM certificate (chain) the feed presents. */
      cert_file: pathSchema(ctx),
      /** Its PEM private key (unencrypted; chmod 600). */
      key_file: pathSchema(ctx),
    })
    .transform(async (tls, zctx) => {
      const problem = await checkTlsFiles(tls.cert_file, tls.key_file);
      if (problem !== undefined) zctx.addIssue({ code: 'custom', message: problem });
      else {
        const mode = await worldAccessibleMode(tls.key_file);
        if (mode !== undefined) ctx.warn(['feed', 'tls', 'key_file'], worldReadableKeyWarning(tls.key_file, mode));
      }
      return tls;
    });
}

/**
 * The permission bits of a file that every local user can access, else undefined. Only "others" counts for the TLS
 * key, unlike a token file: `root:pricing-agent 0640` is how a key renewed by root's ACME client is usually handed to
 * the service, and it keeps the key from every other user.
 */
async function worldAccessibleMode(file: string): Promise<number | undefined> {
  if (process.platform === 'win32') return undefined; // no Unix permission bits: stat reports 0o666
  const mode = (await stat(file)).mode & 0o777;
  return (mode & 0o007) !== 0 ? mode : undefined;
}

function worldReadableKeyWarning(file: string, mode: number): string {
  const octal = mode.toString(8).padStart(4, '0');
  return `the TLS key file ${file} is accessible by every local user (mode ${octal}): any of them can impersonate the feed; run: chmod 600 ${file} (or 640 with the agent's group)`;
}

/** Reads the certificate and key and checks that they make a TLS context; the problem, or undefined. */
export async function checkTlsFiles(certFile: string, keyFile: string): Promise<string | undefined> {
  try {
    createSecureContext(await loadTlsFiles(certFile, keyFile));
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') return `cannot read ${(error as NodeJS.ErrnoException).path ?? 'a TLS file'} (${code})`;
    return `the certificate and key do not make a TLS server context (${(error as Error).message}): check that both are PEM and belong together`;
  }
}

/**
 * Cipher suites of the feed's TLS: TLS 1.3's three, and on TLS 1.2 only ECDHE key exchange with AEAD ciphers
 * (Mozilla's "intermediate" list without DHE): forward secrecy, so a key stolen later cannot decrypt recorded
 * sessions with their tokens. Node's default list also allows RSA key exchange (`AES128-GCM-SHA256`) and CBC.
 */
export const FEED_TLS_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

/** The certificate and key, with the feed's TLS versions and ciphers: what the listener's secure context is made of. */
export async function loadTlsFiles(
  certFile: string,
  keyFile: string,
): Promise<{ cert: Buffer; key: Buffer; ciphers: string; minVersion: 'TLSv1.2'; honorCipherOrder: true }> {
  return { cert: await readFile(certFile), key: await readFile(keyFile), ciphers: FEED_TLS_CIPHERS, minVersion: 'TLSv1.2', honorCipherOrder: true };
}

function consumerSchema(ctx: SectionContext) {
  const tokenFile = pathSchema(ctx).transform(async (file, zctx) => {
    const read = await readSecretFile(file);
    if (!read.ok) {
      zctx.addIssue({ code: 'custom', message: read.message });
      return z.NEVER;
    }
    if (!TOKEN.test(read.content)) {
      const message = `${file}: a token is 32 to 512 characters of A-Z a-z 0-9 . _ ~ + / = - (e.g. openssl rand -hex 32)`;
      zctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    registerSecret(read.content);
    return { file, digest: sha256Hex(read.content), looseMode: read.looseMode };
  });
  return z
    .strictObject({
      /** Unique; in logs, status and metric labels. */
      name: z.string().regex(CONSUMER_NAME, 'a name is 1-64 letters, digits, _ . - (starting with a letter or digit)'),
      /** A file holding the token (trimmed). */
      token_file: tokenFile.optional(),
      /** Or the SHA-256 of the token, in hex. */
      token_sha256: z.string().regex(SHA256_HEX, 'expected 64 hexadecimal digits (sha256sum of the token)').optional(),
      /** The stores whose rows it reads, or "*" for every store; product-level rows go to every consumer. */
      stores: z.union([z.literal('*'), z.array(storeId).min(1)], { error: 'expected "*" or a list of store ids, e.g. [b3a1c2d4-...]' }),
    })
    .transform((consumer, zctx) => {
      const file = consumer.token_file;
      if ((file === undefined) === (consumer.token_sha256 === undefined)) {
        zctx.addIssue({ code: 'custom', message: 'set exactly one of token_file and token_sha256', path: ['token_file'] });
        return z.NEVER;
      }
      return {
        name: consumer.name,
        token_file: file?.file ?? null,
        token_sha256: file?.digest ?? (consumer.token_sha256 ?? '').toLowerCase(),
        stores: consumer.stores === '*' ? ('*' as const) : [...new Set(consumer.stores)],
        looseMode: file?.looseMode,
      };
    });
}

function consumerListSchema(ctx: SectionContext) {
  return z
    .array(consumerSchema(ctx))
    .default([])
    .transform((consumers) =>
      consumers.map(({ looseMode, ...consumer }, index) => {
        if (looseMode !== undefined && consumer.token_file !== null) {
          ctx.warn(['feed', 'consumers', index, 'token_file'], looseModeWarning(consumer.token_file, looseMode, 'token file'));
        }
        return consumer;
      }),
    );
}

export function feedSchema(ctx: SectionContext) {
  return z
    .strictObject({
      /** host:port of the feed listener; null (the default): no feed. */
      listen: listenSchema.nullable().default(null),
      /** Required unless `listen` is a loopback address. */
      tls: tlsSchema(ctx).nullable().default(null),
      consumers: consumerListSchema(ctx),
      /** A price due today or earlier that a store has not confirmed this long after it was stored is overdue. */
      apply_deadline: duration.default(DEFAULT_APPLY_DEADLINE),
      /** Per consumer token: a steady rate and a burst (token bucket); beyond it, 429 with Retry-After. */
      rate_limit: z
        .strictObject({
          requests_per_second: z.number().positive().max(10_000).default(20),
          burst: z.int().min(1).max(100_000).default(100),
        })
        .prefault({}),
      /** Open connections at most; more are refused. Keep the service's file limit above it (LimitNOFILE). */
      max_connections: z.int().min(1).max(65_536).default(4096),
      /**
       * Open connections from one client address at most; more from it are refused, so that one host (or a stranger)
       * cannot take the connections every till needs. Tills behind one NAT address share it: raise it there.
       */
      max_connections_per_address: z.int().min(1).max(65_536).default(DEFAULT_MAX_CONNECTIONS_PER_ADDRESS),
      /**
       * Requests of one consumer token in progress at once (long-polls included); more get 429. With the page and
       * buffer bounds of src/feed/, this bounds what one consumer can make the agent hold.
       */
      max_requests_per_consumer: z.int().min(1).max(1_000).default(DEFAULT_MAX_REQUESTS_PER_CONSUMER),
    })
    .superRefine((feed, check) => {
      const names = new Set<string>();
      const digests = new Map<string, string>();
      feed.consumers.forEach((consumer, index) => {
        if (names.has(consumer.name)) check.addIssue({ code: 'custom', path: ['consumers', index, 'name'], message: `consumer ${consumer.name} is listed twice` });
        names.add(consumer.name);
        const other = digests.get(consumer.token_sha256);
        if (other !== undefined) {
          check.addIssue({ code: 'custom', path: ['consumers', index], message: `${consumer.name} has the same token as ${other}: every consumer needs a token of its own` });
        }
        digests.set(consumer.token_sha256, consumer.name);
      });
      const address = feed.listen === null ? undefined : parseListen(feed.listen);
      if (address && feed.tls === null && !isLoopbackHost(address.host)) {
        check.addIssue({
          code: 'custom',
          path: ['tls'],
          message: `feed.listen ${feed.listen} is not a loopback address: set feed.tls (cert_file, key_file), or listen on 127.0.0.1; tokens and prices never cross a network in clear text`,
        });
      }
    });
}

/** As in the loaded, frozen Config. */
export type FeedConfig = DeepReadonly<z.output<ReturnType<typeof feedSchema>>>;
export type FeedConsumerConfig = FeedConfig['consumers'][number];
