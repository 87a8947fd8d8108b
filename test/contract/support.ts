/**
 * Contract tests: the typed client (src/api) against the sandbox (src/sandbox) over real HTTP on 127.0.0.1, one
 * undici Agent per file as the dispatcher. Status codes are read from the client's own `hooks.onResponse`, so a test
 * asserts what the client received, not what a second HTTP client would.
 *
 * Coverage bookkeeping: vitest runs every test file in its own process, so no single list can see every call of the
 * suite. Instead each file owns a fixed set of operations (CONTRACT_OWNERS), records every operation its client
 * sent, and ends with `ownedOperationsTest`, which fails unless the file exercised all of them; operations.test.ts
 * fails unless the owned sets together are exactly `Object.keys(OPERATIONS)`. A new operation therefore fails the
 * suite until a file owns it, and that file fails until it really calls it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request, type FormData } from 'undici';
import { expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { ApiError } from '../../src/api/errors.ts';
import type { OperationName } from '../../src/api/operations.ts';
import type { Job } from '../../src/api/schemas/index.ts';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.ts';
import { openForFile } from '../support/open-for-file.ts';

/** Which test file proves which operations; together exactly the keys of OPERATIONS (operations.test.ts). */
export const CONTRACT_OWNERS = {
  'auth-errors': ['auth.verify'],
  products: ['products.upsert', 'products.patch', 'products.delete', 'products.bulk', 'products.list', 'products.import'],
  'product-store': [
    'productStore.list',
    'productStore.upsert',
    'productStore.bulk',
    'productStore.get',
    'productStore.patch',
    'productStore.delete',
    'productStore.import',
  ],
  transactions: [
    'transactions.bulk',
    'transactions.upsert',
    'transactions.patch',
    'transactions.delete',
    'transactions.list',
    'transactions.import',
  ],
  'competitor-prices': [
    'competitorPrices.create',
    'competitorPrices.bulk',
    'competitorPrices.patch',
    'competitorPrices.delete',
    'competitorPrices.list',
    'competitorPrices.import',
  ],
  'jobs-exports': ['jobs.get', 'transactionExports.cancel'],
  grids: ['grids.list', 'grids.rows'],
  'approved-prices': ['approvedPrices.list', 'approvedPrices.deliveries', 'approvedPrices.acknowledge'],
} as const satisfies Record<string, readonly OperationName[]>;
export type ContractFile = keyof typeof CONTRACT_OWNERS;

export interface RawResponse {
  readonly status: number;
  readonly body: unknown;
}

export interface ContractHarness {
  readonly file: ContractFile;
  readonly sandbox: SandboxHandle;
  readonly client: ApiClient;
  /** The one dispatcher of this file: the client's, reused for raw requests and any second client. */
  readonly dispatcher: Agent;
  /** Every status the client received, per operation, in order (retries and errors included). */
  readonly statuses: Map<OperationName, number[]>;
  /** The status of the latest response to `operation`. */
  lastStatus(operation: OperationName): number | undefined;
  /** Total responses the client received so far (to prove a local refusal sent nothing). */
  responseCount(): number;
  /** A request the typed client cannot make (removed endpoints, ids it refuses locally), on the same dispatcher. */
  raw(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: string | FormData): Promise<RawResponse>;
  /** Writes a CSV into this file's temp dir and returns its path. */
  csv(name: string, content: string | Buffer): Promise<string>;
  close(): Promise<void>;
}

/** A small sandbox by default (no seeded approvals, no large grid): starts in milliseconds. */
export async function openContract(file: ContractFile, options: SandboxOptions = {}): Promise<ContractHarness> {
  const sandbox = await startSandbox({ approvals: 0, largeGridRows: 0, ...options });
  const dispatcher = new Agent({ allowH2: false });
  const dir = await mkdtemp(join(tmpdir(), `pa-contract-${file}-`));
  const statuses = new Map<OperationName, number[]>();
  let responses = 0;
  const client = new ApiClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    dispatcher,
    hooks: {
      onResponse: ({ operation, status }) => {
        responses += 1;
        const list = statuses.get(operation) ?? [];
        list.push(status);
        statuses.set(operation, list);
      },
    },
  });
  return {
    file,
    sandbox,
    client,
    dispatcher,
    statuses,
    lastStatus: (operation) => statuses.get(operation)?.at(-1),
    responseCount: () => responses,
    async raw(method, path, body) {
      const headers: Record<string, string> = { authorization: `Bearer ${sandbox.apiKey}` };
      if (typeof body === 'string') headers['content-type'] = 'application/json';
      const res = await request(`${sandbox.url}${path}`, { method, headers, body, dispatcher });
      const text = await res.body.text();
      return { status: res.statusCode, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
    },
    async csv(name, content) {
      const path = join(dir, name);
      await writeFile(path, content);
      return path;
    },
    async close() {
      await dispatcher.close();
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One contract harness (see `openContract`) for every test of the file. */
export function contractForFile(file: ContractFile, options: SandboxOptions = {}): ContractHarness {
  return openForFile(() => openContract(file, options));
}

/** Registers the file's last test: every operation it owns was sent by its client at least once. */
export function ownedOperationsTest(harness: () => ContractHarness): void {
  it('exercised every operation this file owns', () => {
    const h = harness();
    const missing = CONTRACT_OWNERS[h.file].filter((operation) => !h.statuses.has(operation));
    expect(missing, `operations owned by ${h.file}.test.ts but never called`).toEqual([]);
  });
}

const TERMINAL = new Set(['completed', 'failed']);

/**
 * Polls an import job until it completes or fails. With the default 'instant' pace the job runs on the sandbox's
 * event loop, which each poll's round trip lets turn, so no timer is needed; the bound only turns a stuck job into a
 * failure instead of a hang.
 */
export async function pollJob(h: ContractHarness, jobId: string, maxPolls = 500): Promise<Job> {
  for (let i = 0; i < maxPolls; i += 1) {
    const job = await h.client.jobs.get(jobId);
    expect(h.lastStatus('jobs.get')).toBe(200);
    if (TERMINAL.has(job.status)) return job;
  }
  throw new Error(`job ${jobId} did not finish within ${maxPolls} polls`);
}

/**
 * The ApiError a call ends with, whether it rejects or throws before returning (the client checks limits, batch
 * sizes and UUIDs synchronously, so a bad listing fails at the call site rather than at its first page).
 */
export async function errorOf(run: () => unknown): Promise<ApiError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected the call to fail');
}

/** Reads the first page of a listing and stops (a destructive listing must not be drained by accident). */
export async function firstPage<P>(pages: AsyncGenerator<P, void, undefined>): Promise<P> {
  const first = await pages.next();
  await pages.return(undefined);
  if (first.done) throw new Error('the listing yielded no page');
  return first.value;
}

/** Every page of a listing. */
export async function allPages<P>(pages: AsyncGenerator<P, void, undefined>): Promise<P[]> {
  const out: P[] = [];
  for await (const page of pages) out.push(page);
  return out;
}

/**
 * Every page of a listing that takes more than one page, asserting that it answered 200 and that its last page ends
 * it (no next cursor); with the items of all pages.
 */
export async function pagedThrough<P extends { items: readonly unknown[]; nextCursor: string | null }>(
  h: ContractHarness,
  operation: OperationName,
  listing: AsyncGenerator<P, void, undefined>,
): Promise<{ pages: P[]; rows: P['items'][number][] }> {
  const pages = await allPages(listing);
  expect(h.lastStatus(operation)).toBe(200);
  expect(pages.length).toBeGreaterThan(1);
  expect(pages.at(-1)?.nextCursor).toBeNull();
  return { pages, rows: pages.flatMap((p) => p.items) };
}

export const uuidOf = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
