/** The state: open it (openStateDb), then pass the handle to the functions of each table family. */
export { StoreError, STORE_ERROR_CODES, type StoreErrorCode } from './errors.ts';
export { isMissingState, openStateDb, stateLocation, type OpenStateOptions } from './open-state-db.ts';
export type { MaintenanceOptions, StateDb } from './state-db.ts';
export type * from './schema.ts';
export { ACK_STATUSES, FEED_KINDS, INTENT_STATUSES, PRODUCT_LEVEL_STORE_KEY } from './schema.ts';
export {
  DEFAULT_PULL_JOB,
  type DeliveryIntent,
  type NewDeliveryIntent,
  abandonDeliveryIntent,
  pendingDeliveryIntent,
  pullCursor,
  recordDeliveryIntent,
} from './delivery-intents.ts';
export * from './approved-prices.ts';
export * from './acknowledgements.ts';
export * from './mirror-tables.ts';
export * from './mirrors.ts';
export * from './price-feed.ts';
export * from './outbox-stats.ts';
