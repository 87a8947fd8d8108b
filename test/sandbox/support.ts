/**
 * Test helpers for the sandbox: raw HTTP through undici `request` with a dedicated Pool as dispatcher (never the
 * global one), every response body read. Responses are checked against the shared contract schemas in the tests
 * themselves.
 */
import { FormData, Pool, request } from 'undici';
import { expect } from 'vitest';
import type { IncomingHttpHeaders } from 'undici/types/header.js';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { openForFile } from '../support/open-for-file.ts';

export interface Response {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** The parsed JSON body (undefined when empty). Tests narrow it with the contract schemas or `as`. */
  readonly body: unknown;
}

export interface CallOptions {
  /** A JSON body. */
  readonly json?: unknown;
  /** A raw body (string, bytes or multipart form). */
  readonly body?: string | Buffer | FormData;
  /** The API key to send; default the sandbox's current key; null sends no Authorization header. */
  readonly key?: string | null;
  readonly headers?: Record<string, string>;
}

export class Client {
  readonly sandbox: SandboxHandle;
  readonly pool: Pool;

  constructor(sandbox: SandboxHandle) {
    this.sandbox = sandbox;
    this.pool = new Pool(sandbox.url, { connections: 4 });
  }

  async call(method: string, path: string, options: CallOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? this.sandbox.apiKey : options.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | Buffer | FormData | undefined = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    }
    const res = await request(new URL(path, this.sandbox.url), {
      dispatcher: this.pool,
      method: method as 'GET',
      headers,
      body,
    });
    const text = await res.body.text();
    const isJson = String(res.headers['content-type'] ?? '').includes('application/json');
    return { status: res.statusCode, headers: res.headers, text, body: isJson && text !== '' ? JSON.parse(text) : undefined };
  }

  get(path: string, options?: CallOptions): Promise<Response> {
    return this.call('GET', path, options);
  }

  post(path: string, json?: unknown, options: CallOptions = {}): Promise<Response> {
    return this.call('POST', path, json === undefined ? options : { ...options, json });
  }

  patch(path: string, json: unknown, options: CallOptions = {}): Promise<Response> {
    return this.call('PATCH', path, { ...options, json });
  }

  delete(path: string, options?: CallOptions): Promise<Response> {
    return this.call('DELETE', path, options);
  }

  /** POST /v1/imports/{entity} with `csv` as the part named `file` (or under `partName`). */
  upload(entity: string, csv: string | Buffer | null, partName = 'file'): Promise<Response> {
    const form = new FormData();
    form.append('note', 'sandbox test');
    if (csv !== null) form.append(partName, new Blob([csv]), `${entity}.csv`);
    return this.call('POST', `/v1/imports/${entity}`, { body: form });
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

export interface Harness {
  readonly sandbox: SandboxHandle;
  readonly client: Client;
  readonly clock: ManualClock;
  close(): Promise<void>;
}

/** A sandbox on a manual clock (time moves only when the test says), small by default. */
export async function open(options: SandboxOptions = {}): Promise<Harness> {
  const clock = new ManualClock();
  const sandbox = await startSandbox({ approvals: 0, largeGridRows: 0, clock, ...options });
  const client = new Client(sandbox);
  return {
    sandbox,
    client,
    clock: (options.clock as ManualClock | undefined) ?? clock,
    async close() {
      await client.close();
      await sandbox.close();
    },
  };
}

/** The first error entry of a 422 body. */
export function firstError(body: unknown): { loc: (string | number)[]; msg: string; type: string } {
  const detail = (body as { detail: { loc: (string | number)[]; msg: string; type: string }[] }).detail;
  const first = detail[0];
  if (!first) throw new Error(`no validation error in ${JSON.stringify(body)}`);
  return first;
}

/** Every page of a listing, in order, following next_cursor: `page(cursor)` reads one (null for the first). */
export async function everyPage<P extends { next_cursor: string | null }>(page: (cursor: string | null) => Promise<P>): Promise<P[]> {
  const pages: P[] = [];
  let cursor: string | null = null;
  do {
    const next: P = await page(cursor);
    pages.push(next);
    cursor = next.next_cursor;
  } while (cursor !== null);
  return pages;
}

/** The `&cursor=` parameter of a page after the first; nothing for the first. */
export const cursorParam = (cursor: string | null): string => (cursor === null ? '' : `&cursor=${cursor}`);

/** Each query of `refused` (query: the parameter its error names) on `path` is refused with 422 on that parameter. */
export async function expectRefusedQueries(h: Harness, path: string, refused: Readonly<Record<string, string>>): Promise<void> {
  for (const [query, parameter] of Object.entries(refused)) {
    const res = await h.client.get(`${path}?${query}`);
    expect(res.status, query).toBe(422);
    expect(firstError(res.body).loc, query).toEqual(['query', parameter]);
  }
}

export const uuidOf = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** The sandbox's error body for 401, 403, 404, 405, 413, 429 and 5xx: `{"detail": "<message>"}`. */
export function expectDetailBody(body: unknown): void {
  expect(Object.keys(body as object)).toEqual(['detail']);
  expect(typeof (body as { detail: unknown }).detail).toBe('string');
}

/** One sandbox (see `open`) for every test of the file. */
export function sandboxForFile(options: SandboxOptions = {}): Harness {
  return openForFile(() => open(options));
}
