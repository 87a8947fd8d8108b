/**
 * The local HTTP server: /healthz (the process is alive), /readyz (200 only when the key was verified, the database
 * is writable and every pipeline runs; else 503 with the reasons; with HA its role, and `?role=active` answers 200
 * only on the active node), /metrics (Prometheus text), and the read-only web
 * console on every other path it knows (src/console/). Loopback by default; nothing here needs or shows a secret.
 * Every path answers only to a Host that names this machine (host-check.ts: DNS rebinding), /healthz too: a page
 * that rebinds a name of its own to this machine must not read the readiness reasons or the metrics either.
 */
import type { Server, ServerResponse } from 'node:http';
import { createServer } from '../node-http.ts';
import { listenError } from '../listen-error.ts';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { ConsoleHandler } from '../console/console-server.ts';
import type { Readiness } from '../status/readiness.ts';
import { hostAllowed, hostRefusedText } from './host-check.ts';

/** How long /readyz waits for the stored Retry-After window to be read again before it answers without it (ms). */
const READYZ_REFRESH_MS = 250;

export interface HealthServerOptions {
  readonly host: string;
  readonly port: number;
  readonly readiness: () => Readiness;
  /** Brings what readiness shows up to date before /readyz answers (the shared Retry-After window). */
  readonly refresh?: () => Promise<unknown>;
  readonly registry: Registry;
  readonly state: () => string;
  /** http.allowed_hosts: names besides IP addresses, localhost and this machine's that requests may use. */
  readonly allowedHosts: () => readonly string[];
  /** The web console (http.console); without it, only the three endpoints. */
  readonly console?: ConsoleHandler;
}

export interface HealthServer {
  readonly url: string;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(`${JSON.stringify(body)}\n`);
}

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, { error: 'method not allowed' });
    if (!hostAllowed(req.headers.host, options.allowedHosts())) {
      const text = hostRefusedText(req.headers.host);
      res.writeHead(421, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : text);
      return;
    }
    if (path === '/healthz') return json(res, 200, { status: 'alive', state: options.state() });
    if (path === '/readyz') {
      const answer = () => {
        const readiness = options.readiness();
        const role = readiness.role === undefined ? {} : { role: readiness.role, node: readiness.node };
        const wait = readiness.api_wait === undefined ? {} : { api_wait: readiness.api_wait };
        // `?role=active` (for load balancers in front of an HA pair): 200 only on the active node.
        const wantActive = new URL(req.url ?? '/', 'http://x').searchParams.get('role') === 'active';
        const ok = readiness.ready && (!wantActive || (readiness.role ?? 'active') === 'active');
        json(res, ok ? 200 : 503, { ready: readiness.ready, state: options.state(), ...role, reasons: readiness.reasons, ...wait });
      };
      // A refresh that fails or hangs (the database went away, its cable pulled) answers from what is known after at
      // most READYZ_REFRESH_MS: a health check never waits on the database (an HA node must be seen standing down).
      if (options.refresh) {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, READYZ_REFRESH_MS)));
        void Promise.race([options.refresh(), late]).then(answer, answer).finally(() => clearTimeout(timer));
      } else answer();
      return;
    }
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': options.registry.contentType });
          res.end(text);
        },
        (error: unknown) => json(res, 500, { error: error instanceof Error ? error.message : 'metrics failed' }),
      );
      return;
    }
    const notFound = () => json(res, 404, { error: 'not found', endpoints: [...(options.console ? ['/'] : []), '/healthz', '/readyz', '/metrics'] });
    if (!options.console) return notFound();
    options.console(req, res).then(
      (handled) => {
        if (!handled) notFound();
      },
      (error: unknown) => {
        // A page that could not be made (the database went away mid-read): say so, keep serving.
        if (!res.headersSent) json(res, 500, { error: error instanceof Error ? error.message : 'the console page failed' });
        else res.destroy();
      },
    );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(listenError(error, options.host, options.port, 'http.host and http.port')));
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
