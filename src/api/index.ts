export { ApiClient } from './client.ts';
export { createDispatcher, type DispatcherOptions } from './dispatcher.ts';
export * from './errors.ts';
export { ackConflictsOf, type AckConflict } from './resources/approved-prices.ts';
export type { Page, CallOptions } from './call.ts';
export type { TransportHooks, TransportOptions } from './transport.ts';
export { OPERATIONS, retryClassOf, type OperationName, type RetryClass } from './operations.ts';
