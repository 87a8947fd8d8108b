/**
 * 0001_base (PostgreSQL): facts about the database itself, as in sqlite/migrations/0001-base.ts.
 *
 * `database_id` is a random id fixed at creation. A POS that stores its feed offset outside this database
 * compares it on start: a different id means the agent's state was recreated and seq numbering restarted.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

export const migration0001Base: Migration = {
  async up(db) {
    await sql`CREATE TABLE agent_meta (key text PRIMARY KEY, value text NOT NULL)`.execute(db);
    await sql`INSERT INTO agent_meta (key, value) VALUES ('database_id', ${randomUUID()}),
      ('created_at', ${new Date().toISOString()})`.execute(db);
  },
};
