/** The API contract as zod schemas: resources, envelopes, limits. Shared by the client and the sandbox. */
export * from './common.ts';
export * from './entities.ts';
export * from './envelopes.ts';
export * from './limits.ts';
export * from './products.ts';
export * from './product-store.ts';
export * from './transactions.ts';
export * from './competitor-prices.ts';
export * from './grids.ts';
export * from './approved-prices.ts';
export * from './jobs.ts';
export * from './validation.ts';
