/**
 * The HTTP server (node:http). A /v1 request goes through, in this order:
 *   route (404 / 405; removed endpoints are 404 and counted) -> bearer auth (401, counted by reason) ->
 *   deny rules (403) -> rate limit (429 + Retry-After) -> faults (latency, 5xx, drop before commit) ->
 *   body (413 past the size limit, 422 for invalid JSON) -> handler -> reply, or drop after commit.
 * /_sandbox/* is the control plane: no key, no rate limit, no faults.
 *
 * A dropped connection is a destroyed socket with no response at all. "Before commit" drains the request body
 * first (so the client sees the connection close, not a write error) and never runs the handler; "after commit"
 * runs the handler, so the write is in the store, and then destroys the socket instead of answering.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from '../node-http.ts';
import { buildApiRouter, REMOVED_PREFIX } from './api-routes.ts';
import { REJECTION_MESSAGES } from './auth.ts';
import type { SandboxControl } from './control.ts';
import { renderReply } from './dialect-wire.ts';
import { buildControlRouter, type ControlDispatch } from './control-routes.ts';
import { FAULT_MESSAGES, FAULT_STATUS } from './faults.ts';
import { NOT_FOUND, detail, readJsonBody, splitUrl, writeReply, type Reply } from './http-io.ts';
import type { Router } from './router.ts';
import type { ApiContext, World } from './world.ts';

/** Longer than any client's keep-alive, so a client never reuses a socket the server is closing. */
const KEEP_ALIVE_MS = 65_000;

export function createSandboxServer(control: SandboxControl): Server {
  const api = buildApiRouter();
  const controlRouter = buildControlRouter(control);
  const server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, (req, res) => {
    void handle(control, api, controlRouter, req, res);
  });
  return server;
}

async function handle(
  control: SandboxControl,
  api: Router<ApiContext>,
  controlRouter: ControlDispatch,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const world = control.world;
  const method = req.method ?? 'GET';
  const { path, query } = splitUrl(req.url ?? '/');
  try {
    const reply =
      path === '/_sandbox' || path.startsWith('/_sandbox/')
        ? await controlRouter(method, path, query, req)
        : await handleApi(world, api, req, method, path, query);
    if (reply === null) req.socket.destroy();
    else writeReply(res, reply);
  } catch (error) {
    world.counters.internal_errors += 1;
    console.error('sandbox: internal error', error);
    if (!res.headersSent) writeReply(res, detail(500, 'Internal Server Error'));
    else res.destroy();
  }
}

/** The reply, or null when the connection must be dropped without one. */
async function handleApi(
  world: World,
  api: Router<ApiContext>,
  req: IncomingMessage,
  method: string,
  path: string,
  query: URLSearchParams,
): Promise<Reply | null> {
  world.counters.requests += 1;
  if (path === REMOVED_PREFIX || path.startsWith(`${REMOVED_PREFIX}/`)) {
    world.counters.removed_endpoint_requests += 1;
    return NOT_FOUND;
  }
  const match = api.match(method, path);
  if (match.kind === 'not_found') return NOT_FOUND;
  if (match.kind === 'method_not_allowed') return detail(405, 'Method Not Allowed', { allow: match.allow.join(', ') });

  const auth = world.keys.check(req.headers.authorization);
  if (!auth.ok) return detail(401, REJECTION_MESSAGES[auth.reason], { 'www-authenticate': 'Bearer' });
  if (world.keys.isDenied(method, path)) {
    world.counters.forbidden_requests += 1;
    return detail(403, 'Not enough permissions for this resource');
  }
  const limited = world.rateLimiter.check(world.keys.keyId, world.now(), method, path);
  if (limited) return detail(429, 'Too Many Requests', { 'retry-after': limited.retryAfter });

  const fault = world.faults.decide(method, path);
  if (fault.latencyMs > 0) await world.clock.sleep(fault.latencyMs, world.lifetime.signal);
  if (fault.kind === 'error_500' || fault.kind === 'error_502' || fault.kind === 'error_503') {
    return detail(FAULT_STATUS[fault.kind], FAULT_MESSAGES[fault.kind]);
  }
  if (fault.kind === 'drop_before_commit') {
    await drain(req);
    return null;
  }

  let body: unknown;
  if (match.route.body === 'json') {
    const parsed = await readJsonBody(req, world.options.maxBodyBytes);
    if (!parsed.ok) return parsed.reply;
    body = parsed.value;
  }
  const reply = await match.route.handler({ world, params: match.params, query, body, req, now: world.now() });
  return fault.kind === 'drop_after_commit' ? null : renderReply(reply, world.dialect);
}

function drain(req: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    if (req.readableEnded) {
      resolve();
      return;
    }
    req.on('end', resolve);
    req.on('error', () => resolve());
    req.resume();
  });
}
