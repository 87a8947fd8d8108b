/**
 * Preloaded into an agent child process (`node --import` this file; daemon-harness.ts `start({ killAtSql })`): the
 * process SIGKILLs itself the moment it prepares a SQLite statement that contains PRICING_AGENT_TEST_KILL_AT_SQL.
 * A crash test can so die between two steps with nothing to watch for in between (a file moved, its ledger row not
 * yet closed), which no kill timed from outside lands on. Kysely prepares every statement as it runs it.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const needle = process.env['PRICING_AGENT_TEST_KILL_AT_SQL'];
if (needle !== undefined && needle !== '') {
  // The same module instance the agent loads (one CommonJS cache), so patching its prototype reaches the agent.
  const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  const { prototype } = Database;
  const prepare = Object.getOwnPropertyDescriptor(prototype, 'prepare')?.value as (this: BetterSqlite3.Database, source: string) => BetterSqlite3.Statement;
  Object.defineProperty(prototype, 'prepare', {
    value: function prepareOrDie(this: BetterSqlite3.Database, source: string) {
      if (source.includes(needle)) process.kill(process.pid, 'SIGKILL');
      return prepare.call(this, source);
    },
  });
}
