/**
 * The feed listener: a second HTTP(S) server of the daemon, for POS systems, store servers and middleware on the
 * network (routes.ts has the endpoints). Off unless `feed.listen` is set; TLS whenever the address is not loopback
 * (the config refuses the rest, and so does `start`).
 *
 * Bounds, so that slow or idle clients cannot hold the server (defaults below, one place):
 * - at most `feed.max_connections` open connections; Node closes the ones beyond at once; and at most
 *   `feed.max_connections_per_address` from one client address, closed at once beyond, so that idle connections
 *   of one host cannot take the connections every till needs;
 * - the request line and headers must arrive within `headersTimeoutMs`, the whole request within
 *   `requestTimeoutMs` (checked every `checkIntervalMs`); headers above `maxHeaderBytes` get 431; bodies above
 *   16 KiB get 413; a TLS handshake must end within `tlsHandshakeTimeoutMs`;
 * - an idle keep-alive connection is closed after `keepAliveTimeoutMs`;
 * - a long-poll waits at most 60 s; large answers are written slice by slice as the client reads them
 *   (stream-answer.ts): a client that takes nothing for `responseFlushMs`, or does not read the end of an answer
 *   within `responseFlushMs` after it was written, has its connection destroyed; meanwhile it holds one slice;
 * - a consumer has at most `feed.max_requests_per_consumer` requests in progress (429 beyond: consumer-load.ts).
 *
 * SIGHUP (`reconfigure`): consumers, their tokens and stores, the rate limit and the certificate are replaced at
 * once; a removed token fails its next request and its waiting long-polls are answered 401 right away. The address
 * and the switch between HTTP and HTTPS need a restart.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createHttpServer } from '../node-http.ts';
import { listenError } from '../listen-error.ts';
import type { AddressInfo, Socket } from 'node:net';
import type { Clock } from '../clock.ts';
import { isLoopbackHost } from '../config/base-url.ts';
import { type FeedConfig, loadTlsFiles, parseListen } from '../config/feed-schema.ts';
import type { Logger } from '../log.ts';
import { databaseId as readDatabaseId } from '../store/meta.ts';
import type { StateDb } from '../store/state-db.ts';
import { ConsumerLoad } from './consumer-load.ts';
import { ConsumerDirectory } from './consumers.ts';
import { FeedHttpError, sendError } from './http.ts';
import { LastSeen } from './last-seen.ts';
import { LongPollHub } from './long-poll.ts';
import { RateLimiter } from './rate-limit.ts';
import { type FeedContext, type FeedEvents, handleFeedRequest } from './routes.ts';

export interface FeedLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly tlsHandshakeTimeoutMs: number;
  readonly responseFlushMs: number;
  readonly maxHeaderBytes: number;
  readonly checkIntervalMs: number;
  /** How long a drain lets answers in flight finish before closing their connections. */
  readonly closeGraceMs: number;
}

export const FEED_LIMITS: FeedLimits = {
  headersTimeoutMs: 5_000, // 5 s for the request line and headers (from the connection, or the last request)
  requestTimeoutMs: 15_000, // 15 s for the whole request
  keepAliveTimeoutMs: 15_000, // 15 s idle between requests
  tlsHandshakeTimeoutMs: 10_000, // 10 s
  responseFlushMs: 30_000, // 30 s for the client to read an answer
  maxHeaderBytes: 8 * 1024, // 8 KiB
  checkIntervalMs: 1_000, // 1 s
  closeGraceMs: 2_000, // 2 s
};

/** Requests without a valid token, per client address: a client guessing tokens is slowed to this. */
const STRANGER_RATE = { perSecond: 2, burst: 20 };

export interface FeedServerEvents extends FeedEvents {
  /** Open connections, after each change. */
  connections?(open: number): void;
  /** Long-polls waiting, after each change. */
  waiting?(count: number): void;
}

export interface FeedServerOptions {
  readonly db: StateDb;
  readonly config: FeedConfig;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly events?: FeedServerEvents;
  readonly limits?: Partial<FeedLimits>;
  /** How often commits of other processes are looked for while long-polls wait (default 500 ms). */
  readonly crossProcessPollMs?: number;
}

export class FeedServer {
  readonly #server: Server | HttpsServer;
  readonly #ctx: FeedContext;
  readonly #logger: Logger;
  readonly #limits: FeedLimits;
  readonly #hub: LongPollHub;
  readonly #limiter: RateLimiter;
  readonly #load: ConsumerLoad;
  readonly #seen: LastSeen;
  readonly #tls: boolean;
  readonly #events: FeedServerEvents;
  #config: FeedConfig;
  #directory: ConsumerDirectory;
  #url = '';
  #open = 0;
  #closing = false;
  #lastDropWarning = 0;
  #lastAddressWarning = 0;
  /** Open connections per client address (only addresses with one or more). */
  readonly #perAddress = new Map<string, number>();

  private constructor(options: FeedServerOptions, server: Server | HttpsServer, tls: boolean, databaseId: string) {
    const { db, clock, logger, config } = options;
    this.#server = server;
    this.#tls = tls;
    this.#events = options.events ?? {};
    this.#config = config;
    this.#logger = logger;
    this.#limits = { ...FEED_LIMITS, ...options.limits };
    this.#directory = new ConsumerDirectory(config.consumers);
    this.#hub = new LongPollHub(db, clock, { crossProcessPollMs: options.crossProcessPollMs, onWaiting: (count) => this.#events.waiting?.(count) });
    this.#limiter = new RateLimiter(rateSettings(config), () => clock.now());
    this.#load = new ConsumerLoad(config.max_requests_per_consumer);
    this.#seen = new LastSeen(db, clock, logger);
    this.#ctx = {
      db,
      clock,
      logger,
      directory: () => this.#directory,
      hub: this.#hub,
      limiter: this.#limiter,
      load: this.#load,
      answerStallMs: this.#limits.responseFlushMs,
      strangers: new RateLimiter(STRANGER_RATE, () => clock.now()),
      strangerWarnings: new Map(),
      seen: this.#seen,
      databaseId,
      events: this.#events,
    };
  }

  /** Starts listening on `config.listen`; throws when it is not set, not allowed, or the address is taken. */
  static async start(options: FeedServerOptions): Promise<FeedServer> {
    const { config } = options;
    const address = config.listen === null ? undefined : parseListen(config.listen);
    if (!address) throw new Error('feed.listen is not set: the feed is off');
    if (config.tls === null && !isLoopbackHost(address.host)) {
      throw new Error(`feed.listen ${config.listen} is not a loopback address: plain HTTP is refused there; set feed.tls`);
    }
    const limits = { ...FEED_LIMITS, ...options.limits };
    const serverOptions = {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      maxHeaderSize: limits.maxHeaderBytes,
      connectionsCheckingInterval: limits.checkIntervalMs,
      noDelay: true,
    };
    const server = config.tls
      ? createHttpsServer({ ...serverOptions, ...(await loadTlsFiles(config.tls.cert_file, config.tls.key_file)), handshakeTimeout: limits.tlsHandshakeTimeoutMs })
      : createHttpServer(serverOptions);
    const feed = new FeedServer(options, server, config.tls !== null, (await readDatabaseId(options.db)) ?? '');
    await feed.#listen(address.host, address.port);
    return feed;
  }

  get url(): string {
    return this.#url;
  }

  /** Long-polls waiting now. */
  get waiting(): number {
    return this.#hub.waiting;
  }

  /** Bytes of `consumer`'s answers written but not yet taken by its sockets: what its unread answers cost. */
  bufferedBytes(consumer: string): number {
    return this.#load.buffered(consumer);
  }

  /** Answer bytes produced for `consumer` since the start (work done for it). */
  producedBytes(consumer: string): number {
    return this.#load.produced(consumer);
  }

  /** Requests of `consumer` in progress. */
  inProgress(consumer: string): number {
    return this.#load.inProgress(consumer);
  }

  /** Writes pending "last seen" times now (tests; the listener does it every few seconds). */
  async flushLastSeen(): Promise<void> {
    await this.#seen.flush();
  }

  async #listen(host: string, port: number): Promise<void> {
    const server = this.#server;
    server.maxConnections = this.#config.max_connections;
    server.keepAliveTimeout = this.#limits.keepAliveTimeoutMs;
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.#request(req, res));
    server.on('connection', (socket: Socket) => this.#connection(socket));
    server.on('drop', () => this.#dropped());
    await new Promise<void>((resolve, reject) => {
      const failed = (error: Error) => reject(listenError(error, host, port, 'feed.listen'));
      server.once('error', failed);
      server.listen(port, host, () => {
        server.off('error', failed);
        resolve();
      });
    });
    server.on('error', (error) => this.#logger.error({ error: error.message }, 'feed listener error'));
    const bound = server.address() as AddressInfo;
    const shown = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
    this.#url = `${this.#tls ? 'https' : 'http'}://${shown}:${bound.port}`;
  }

  #connection(socket: Socket): void {
    const address = socket.remoteAddress ?? 'unknown';
    const fromAddress = (this.#perAddress.get(address) ?? 0) + 1;
    if (fromAddress > this.#config.max_connections_per_address) {
      socket.destroy();
      this.#refusedFrom(address);
      return;
    }
    this.#perAddress.set(address, fromAddress);
    this.#open += 1;
    this.#events.connections?.(this.#open);
    socket.once('close', () => {
      const left = (this.#perAddress.get(address) ?? 1) - 1;
      if (left > 0) this.#perAddress.set(address, left);
      else this.#perAddress.delete(address);
      this.#open -= 1;
      this.#events.connections?.(this.#open);
    });
  }

  /** Logs at warn, at most once a minute, that an address reached its connection limit. */
  #refusedFrom(address: string): void {
    const now = Date.now();
    if (now - this.#lastAddressWarning < 60_000) return;
    this.#lastAddressWarning = now;
    const limit = this.#config.max_connections_per_address;
    this.#logger.warn({ address, max_connections_per_address: limit }, `feed connections from ${address} refused: feed.max_connections_per_address (${limit}) reached`);
  }

  #dropped(): void {
    const now = Date.now();
    if (now - this.#lastDropWarning < 60_000) return;
    this.#lastDropWarning = now;
    this.#logger.warn({ max_connections: this.#config.max_connections }, 'feed connections refused: feed.max_connections reached');
  }

  #request(req: IncomingMessage, res: ServerResponse): void {
    if (this.#closing) {
      sendError(res, new FeedHttpError(503, 'the agent is stopping; try again in a moment', { connection: 'close', 'retry-after': '5' }));
      return;
    }
    void handleFeedRequest(this.#ctx, req, res).then(() => this.#bound(res));
  }

  /** An answer the client does not read in time gives up its connection. */
  #bound(res: ServerResponse): void {
    if (res.writableFinished || res.destroyed) return;
    const timer = setTimeout(() => {
      if (!res.writableFinished) res.socket?.destroy();
    }, this.#limits.responseFlushMs);
    timer.unref();
    res.once('finish', () => clearTimeout(timer));
    res.once('close', () => clearTimeout(timer));
  }

  /** SIGHUP: the new consumers, rate limit and certificate; the rest needs a restart (logged). */
  async reconfigure(next: FeedConfig): Promise<void> {
    const previous = this.#config;
    if (next.listen !== previous.listen || (next.tls === null) !== (previous.tls === null)) {
      this.#logger.warn('feed.listen or the use of feed.tls changed: restart the agent to apply it');
    }
    if (next.tls && this.#tls) {
      (this.#server as HttpsServer).setSecureContext(await loadTlsFiles(next.tls.cert_file, next.tls.key_file));
    }
    this.#config = next;
    this.#server.maxConnections = next.max_connections;
    this.#limiter.configure(rateSettings(next));
    this.#load.configure(next.max_requests_per_consumer);
    this.#directory = new ConsumerDirectory(next.consumers);
    this.#hub.reauthorize(this.#directory);
    this.#logger.info({ consumers: this.#directory.size }, 'feed consumers reloaded');
  }

  /** Answers waiting long-polls (an empty page), stops accepting, lets answers in flight finish, closes. */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    this.#hub.close();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeIdleConnections();
    const grace = setTimeout(() => this.#server.closeAllConnections(), this.#limits.closeGraceMs);
    await closed;
    clearTimeout(grace);
    await this.#seen.close();
  }
}

function rateSettings(config: FeedConfig): { perSecond: number; burst: number } {
  return { perSecond: config.rate_limit.requests_per_second, burst: config.rate_limit.burst };
}
