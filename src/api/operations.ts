/**
 * Every operation of the Public API (33 of them) as data: method, path template and retry class. The retry class
 * comes from the spec's "Retry rules" and "Pagination and bulk conventions":
 *
 * - `idempotent`: repeating the request cannot change the outcome (GET; single-record POST keyed on a path id;
 *   PATCH; DELETE; bulk, idempotent per business key; deliveries, replayable by request_id; export cancel). Retried
 *   on 5xx and transport errors with backoff.
 * - `unsafe`: repeating could duplicate or lose data. `POST /v1/competitor_prices` creates a new row each time, and
 *   `GET /v1/approved_prices` with history=false moves the rows it returns out of the pending set (a lost response
 *   loses that page). Retried only when the request provably never reached the server (connection refused, DNS,
 *   connect timeout) or was refused with 429.
 * - `upload`: a CSV import. Retried like idempotent requests, with the multipart body rebuilt from the file on disk
 *   for every attempt (a consumed stream cannot be re-sent). A job that later fails is never resubmitted here.
 *
 * Acknowledge is classed idempotent: a repeat after a lost response cannot acknowledge an id twice; the server answers
 * 409 for ids already acknowledged, which the pull reconciles through a history read.
 */
export type RetryClass = 'idempotent' | 'unsafe' | 'upload';
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface OperationSpec {
  readonly method: HttpMethod;
  readonly path: string;
  readonly retry: RetryClass;
  /** Overrides `retry` for a particular query (approved prices: history=true is a read-only read). */
  readonly retryFor?: (query: Readonly<Record<string, unknown>>) => RetryClass;
}

export const OPERATIONS = {
  'auth.verify': { method: 'GET', path: '/v1/auth/verify', retry: 'idempotent' },

  'products.upsert': { method: 'POST', path: '/v1/products/{id}', retry: 'idempotent' },
  'products.patch': { method: 'PATCH', path: '/v1/products/{id}', retry: 'idempotent' },
  'products.delete': { method: 'DELETE', path: '/v1/products/{id}', retry: 'idempotent' },
  'products.bulk': { method: 'POST', path: '/v1/products/bulk', retry: 'idempotent' },
  'products.list': { method: 'GET', path: '/v1/products', retry: 'idempotent' },
  'products.import': { method: 'POST', path: '/v1/imports/products', retry: 'upload' },

  'productStore.list': { method: 'GET', path: '/v1/product_store', retry: 'idempotent' },
  'productStore.upsert': { method: 'POST', path: '/v1/product_store', retry: 'idempotent' },
  'productStore.bulk': { method: 'POST', path: '/v1/product_store/bulk', retry: 'idempotent' },
  'productStore.get': { method: 'GET', path: '/v1/product_store/{id}', retry: 'idempotent' },
  'productStore.patch': { method: 'PATCH', path: '/v1/product_store/{id}', retry: 'idempotent' },
  'productStore.delete': { method: 'DELETE', path: '/v1/product_store/{id}', retry: 'idempotent' },
  'productStore.import': { method: 'POST', path: '/v1/imports/product_store', retry: 'upload' },

  'transactions.bulk': { method: 'POST', path: '/v1/transactions/bulk', retry: 'idempotent' },
  'transactions.upsert': { method: 'POST', path: '/v1/transactions/{id}', retry: 'idempotent' },
  'transactions.patch': { method: 'PATCH', path: '/v1/transactions/{id}', retry: 'idempotent' },
  'transactions.delete': { method: 'DELETE', path: '/v1/transactions/{id}', retry: 'idempotent' },
  'transactions.list': { method: 'GET', path: '/v1/transactions', retry: 'idempotent' },
  'transactions.import': { method: 'POST', path: '/v1/imports/transactions', retry: 'upload' },

  'competitorPrices.create': { method: 'POST', path: '/v1/competitor_prices', retry: 'unsafe' },
  'competitorPrices.bulk': { method: 'POST', path: '/v1/competitor_prices/bulk', retry: 'idempotent' },
  'competitorPrices.patch': { method: 'PATCH', path: '/v1/competitor_prices/{id}', retry: 'idempotent' },
  'competitorPrices.delete': { method: 'DELETE', path: '/v1/competitor_prices/{id}', retry: 'idempotent' },
  'competitorPrices.list': { method: 'GET', path: '/v1/competitor_prices', retry: 'idempotent' },
  'competitorPrices.import': { method: 'POST', path: '/v1/imports/competitor_prices', retry: 'upload' },

  'jobs.get': { method: 'GET', path: '/v1/jobs/{id}', retry: 'idempotent' },

  'grids.list': { method: 'GET', path: '/v1/grids', retry: 'idempotent' },
  'grids.rows': { method: 'GET', path: '/v1/grids/{id}/rows', retry: 'idempotent' },

  'approvedPrices.list': {
    method: 'GET',
    path: '/v1/approved_prices',
    retry: 'unsafe',
    retryFor: (query) => (query['history'] === true || query['history'] === 'true' ? 'idempotent' : 'unsafe'),
  },
  'approvedPrices.deliveries': { method: 'POST', path: '/v1/approved_prices/deliveries', retry: 'idempotent' },
  'approvedPrices.acknowledge': { method: 'POST', path: '/v1/approved_prices/acknowledge', retry: 'idempotent' },

  'transactionExports.cancel': { method: 'POST', path: '/v1/transactions/exports/{id}/cancel', retry: 'idempotent' },
} as const satisfies Record<string, OperationSpec>;

export type OperationName = keyof typeof OPERATIONS;

export function retryClassOf(operation: OperationName, query: Readonly<Record<string, unknown>> = {}): RetryClass {
  const spec: OperationSpec = OPERATIONS[operation];
  return spec.retryFor ? spec.retryFor(query) : spec.retry;
}

/** Fills `{id}` in a path template; ids are URL-encoded. */
export function buildPath(operation: OperationName, id?: string | number): string {
  const template: string = OPERATIONS[operation].path;
  if (!template.includes('{id}')) return template;
  if (id === undefined || id === '') throw new TypeError(`${operation} needs an id`);
  return template.replace('{id}', encodeURIComponent(String(id)));
}
