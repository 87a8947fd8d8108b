/** The state database: open it, then pass the handle to the functions of the table families. */
export { StoreError, type StoreErrorCode } from './errors.ts';
export { openDatabase, type OpenOptions } from './open-database.ts';
export { StateDb } from './state-db.ts';
export { MIGRATIONS, migrateToLatest } from './migrations/index.ts';
export * from './wal-maintenance.ts';
export type * from './schema.ts';
export { ACK_STATUSES, FEED_KINDS, INTENT_STATUSES } from './schema.ts';
