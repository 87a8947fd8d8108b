/** The state database: open it, then pass the handle to the functions of each table family. */
export { StoreError, STORE_ERROR_CODES, type StoreErrorCode } from './errors.ts';
export { DATABASE_FILE, databasePath, openDatabase, type OpenOptions } from './open-database.ts';
export { StateDb, type Statement } from './state-db.ts';
export { MIGRATIONS, migrateToLatest } from './migrations/index.ts';
export { PRODUCT_LEVEL_STORE_KEY } from './migrations/0002-pull-outbox.ts';
export * from './wal-maintenance.ts';
export type * from './schema.ts';
export { ACK_STATUSES, FEED_KINDS, INTENT_STATUSES } from './schema.ts';
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
