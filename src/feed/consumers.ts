/**
 * The feed's consumers as the listener knows them: who a bearer token belongs to, and which stores it may read.
 *
 * Tokens are never held: the config keeps the SHA-256 of each (src/config/feed-schema.ts), and a request's token is
 * hashed and looked up by its digest. The lookup key is a hash of what the client sent, so how long the lookup takes
 * says nothing about any configured token (a client cannot steer a digest towards one); the stored digest is then
 * compared with `crypto.timingSafeEqual`. A wrong token and a missing one get the same answer, and no answer or log
 * line ever contains a token.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FeedConsumerConfig } from '../config/feed-schema.ts';
import type { StoreScope } from '../store/price-feed.ts';

export interface FeedConsumer {
  readonly name: string;
  /** The stores it reads ('*': every store); product-level rows go to every consumer. */
  readonly scope: StoreScope;
  /** The same stores as a set (null for '*'). */
  readonly stores: ReadonlySet<string> | null;
  /** SHA-256 of its token. */
  readonly digest: Buffer;
}

export class ConsumerDirectory {
  readonly #byDigest = new Map<string, FeedConsumer>();
  readonly #byName = new Map<string, FeedConsumer>();

  constructor(consumers: readonly FeedConsumerConfig[]) {
    for (const c of consumers) {
      const consumer: FeedConsumer = {
        name: c.name,
        scope: c.stores === '*' ? '*' : Object.freeze([...c.stores]),
        stores: c.stores === '*' ? null : new Set(c.stores),
        digest: Buffer.from(c.token_sha256, 'hex'),
      };
      this.#byDigest.set(c.token_sha256, consumer);
      this.#byName.set(c.name, consumer);
    }
  }

  get size(): number {
    return this.#byDigest.size;
  }

  list(): FeedConsumer[] {
    return [...this.#byName.values()];
  }

  byName(name: string): FeedConsumer | undefined {
    return this.#byName.get(name);
  }

  /** The consumer of an `Authorization: Bearer <token>` header, or null (missing, malformed or unknown). */
  authenticate(authorization: string | undefined): FeedConsumer | null {
    const token = bearerToken(authorization);
    if (token === null) return null;
    return this.byDigest(createHash('sha256').update(token, 'utf8').digest());
  }

  /** The consumer whose token has this SHA-256 digest, or null. */
  byDigest(digest: Buffer): FeedConsumer | null {
    const consumer = this.#byDigest.get(digest.toString('hex'));
    if (!consumer || !timingSafeEqual(consumer.digest, digest)) return null;
    return consumer;
  }
}

/** The token of a Bearer authorization header (RFC 6750: the scheme is case-insensitive). */
export function bearerToken(authorization: string | undefined): string | null {
  if (authorization === undefined) return null;
  const match = /^Bearer +([^\s]+)\s*$/i.exec(authorization);
  return match?.[1] ?? null;
}

/** True when `consumer` may read the rows of `storeId`. */
export function inScope(consumer: FeedConsumer, storeId: string): boolean {
  return consumer.stores === null || consumer.stores.has(storeId);
}
