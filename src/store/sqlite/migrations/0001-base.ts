/**
 * 0001_base: facts about the database itself.
 *
 * `database_id` is a random id fixed at creation. A POS that stores its feed offset outside this database
 * compares it on start: a different id means the agent's database was recreated and seq numbering restarted.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

export const migration0001Base: Migration = {
  async up(db) {
    await sql`CREATE TABLE agent_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT`.execute(db);
    await sql`INSERT INTO agent_meta (key, value) VALUES ('database_id', ${randomUUID()}),
      ('created_at', ${new Date().toISOString()})`.execute(db);
  },
};
