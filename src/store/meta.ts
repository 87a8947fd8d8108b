/** Facts about the state database itself: its id, and which tables an older agent's database already has. */
import { sqlOf } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

/** True when the schema has the table `name` (a database migrated by an older agent may lack newer ones). */
export async function hasTable(db: StateDb, name: string): Promise<boolean> {
  const sql = sqlOf(db);
  return (await sql.value<number>(sql.dialect.tableExists, [name])) !== undefined;
}

/** The random id fixed when the database was created (agent_meta), null if it has none. */
export async function databaseId(db: StateDb): Promise<string | null> {
  return (await sqlOf(db).value<string>(`SELECT value FROM agent_meta WHERE key = 'database_id'`)) ?? null;
}
