/**
 * A loopback HTTP server that answers from a script, one step per request: a status with a body, or `reset` (the
 * socket is destroyed after the request arrived, as a crashed proxy or server would). For transport failures that
 * nock cannot produce with undici (its replyWithError hangs undici requests).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Step =
  | { reply: number; body?: unknown; headers?: Record<string, string> }
  | { reset: true };

/** The body of a successful GET /v1/auth/verify. */
export const VERIFY_BODY = { ok: true, user_id: '0d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f', api_key_id: '1d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f' };

/** A 429 whose Retry-After names `seconds`. */
export function rateLimited(seconds: number): Step {
  return { reply: 429, body: { detail: 'rate limited' }, headers: { 'retry-after': String(seconds) } };
}

export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export interface ScriptedServer {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

export async function startScriptedServer(steps: Step[]): Promise<ScriptedServer> {
  const received: Received[] = [];
  let next = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      const step = steps[next] ?? { reply: 599, body: { detail: 'script exhausted' } };
      next += 1;
      if ('reset' in step) {
        req.socket.destroy();
        return;
      }
      const body = step.body === undefined ? '' : JSON.stringify(step.body);
      res.writeHead(step.reply, { 'content-type': 'application/json', ...step.headers });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback URL on which nothing listens: connecting is refused. */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
