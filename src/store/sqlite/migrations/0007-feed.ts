/**
 * 0007_feed: what the feed API (src/feed/) records about its consumers, so that `status`, `outbox consumers` and the
 * metrics (other processes, or the daemon after a restart) see it. Owner: src/store/feed-consumers.ts.
 *
 * - feed_consumers: when each configured consumer was last seen (its last authenticated request). Written in
 *   batches, at most every few seconds per consumer: it is a diagnosis aid, not a checkpoint.
 * - feed_applied: per consumer and store, the highest seq of that store's feed (store-level and product-level
 *   rows) that the store confirmed it applied (`POST /feed/v1/applied`). Never moves back.
 *
 * Offsets stay in consumer_offsets (0002): a feed consumer's offset is the row under its configured name.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

const STATEMENTS = [
  `CREATE TABLE feed_consumers (
    consumer TEXT PRIMARY KEY CHECK (length(consumer) > 0),
    last_seen_at TEXT NOT NULL
  ) STRICT`,
  `CREATE TABLE feed_applied (
    consumer TEXT NOT NULL CHECK (length(consumer) > 0),
    store_id TEXT NOT NULL CHECK (length(store_id) > 0),
    applied_seq INTEGER NOT NULL CHECK (applied_seq >= 0),
    -- When the store says it applied them (its clock, as sent); null when it did not say.
    applied_at TEXT,
    -- When the agent recorded the confirmation (the agent's clock).
    confirmed_at TEXT NOT NULL,
    PRIMARY KEY (consumer, store_id)
  ) STRICT`,
];

export const migration0007Feed: Migration = statementsMigration(STATEMENTS);
