/**
 * 0007_feed (PostgreSQL): what the feed API (src/feed/) records about its consumers, as in
 * sqlite/migrations/0007-feed.ts. Owner: src/store/feed-consumers.ts.
 *
 * - feed_consumers: when each configured consumer was last seen (its last authenticated request).
 * - feed_applied: per consumer and store, the highest seq of that store's feed that the store confirmed it applied
 *   (`POST /feed/v1/applied`). Never moves back.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

const STATEMENTS = [
  `CREATE TABLE feed_consumers (
    consumer text PRIMARY KEY CHECK (length(consumer) > 0),
    last_seen_at text NOT NULL
  )`,
  `CREATE TABLE feed_applied (
    consumer text NOT NULL CHECK (length(consumer) > 0),
    store_id text NOT NULL CHECK (length(store_id) > 0),
    applied_seq bigint NOT NULL CHECK (applied_seq >= 0),
    -- When the store says it applied them (its clock, as sent); null when it did not say.
    applied_at text,
    -- When the agent recorded the confirmation (the agent's clock).
    confirmed_at text NOT NULL,
    PRIMARY KEY (consumer, store_id)
  )`,
];

export const migration0007Feed: Migration = statementsMigration(STATEMENTS);
