/**
 * The rules of an upgrade, the same on both backends (docs/upgrade.md): a state migrated by a newer agent is refused
 * with one sentence (who wrote it, and the backup to restore); before a start migrates an existing state, an automatic
 * backup is written to `<state dir>/backups/` and named in the log; each migration records the version that ran it.
 * The backends read the facts and take the copies (sqlite/backup.ts, postgres/dump.ts); the names and the sentences
 * are here.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AGENT_VERSION } from '../version.ts';

/** Automatic backups kept in `<state dir>/backups/` (the oldest beyond this are removed). */
export const AUTOMATIC_BACKUPS_KEPT = 3;
const AUTOMATIC_PREFIX = 'pricing-agent-pre-upgrade-';
/** A SQLite state is copied as a database file; a PostgreSQL schema as pg_dump's custom format. */
const EXTENSIONS = /\.(db|dump)$/;

/** agent_meta key of the version of the agent that last migrated the state. */
export const WRITTEN_BY_KEY = 'written_by_version';

/** What a state says about itself: its applied migrations and the agent version that last migrated it. */
export interface StateFacts {
  readonly applied: readonly string[];
  readonly writtenBy: string | null;
}

/** `<state dir>/backups/pricing-agent[-pre-upgrade]-<version>-<UTC timestamp>.<db|dump>`. */
export function defaultBackupPath(stateDir: string, now: Date, automatic = false, extension: 'db' | 'dump' = 'db'): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return join(stateDir, 'backups', `${automatic ? AUTOMATIC_PREFIX : 'pricing-agent-'}${AGENT_VERSION}-${stamp}.${extension}`);
}

/** The applied migrations this build does not know (`known`: its own list): a newer agent wrote the state. */
export function unknownMigrations(facts: StateFacts, known: Readonly<Record<string, unknown>>): string[] {
  return facts.applied.filter((name) => !(name in known));
}

/** True when this build has migrations an existing state has not run yet (a start would migrate it). */
export function hasPendingMigrations(facts: StateFacts, known: Readonly<Record<string, unknown>>): boolean {
  const applied = new Set(facts.applied);
  return facts.applied.length > 0 && Object.keys(known).some((name) => !applied.has(name));
}

/** The one sentence of a state written by a newer agent: who wrote it, and how to go back. */
export function tooNewMessage(location: string, facts: StateFacts, known: Readonly<Record<string, unknown>>, stateDir: string): string {
  const writer = facts.writtenBy === null ? 'a newer pricing-agent' : `pricing-agent ${facts.writtenBy}`;
  const unknown = unknownMigrations(facts, known).join(', ');
  const backup = newestAutomaticBackup(stateDir);
  const way = backup === null ? 'install that version or a newer one' : `install that version or a newer one, or restore the backup taken before the upgrade with \`pricing-agent state restore ${backup}\``;
  return `${location} was upgraded by ${writer} (migrations ${unknown} are unknown to this pricing-agent ${AGENT_VERSION}): ${way}`;
}

/** The automatic backups in `<state dir>/backups/`, oldest first (the UTC time in their names sorts them). */
function automaticBackups(stateDir: string): string[] {
  const dir = join(stateDir, 'backups');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.startsWith(AUTOMATIC_PREFIX) && EXTENSIONS.test(f))
    .sort((a, b) => a.replace(EXTENSIONS, '').localeCompare(b.replace(EXTENSIONS, '')))
    .map((f) => join(dir, f));
}

/** The newest automatic backup in `<state dir>/backups/`, null when there is none. */
export function newestAutomaticBackup(stateDir: string): string | null {
  return automaticBackups(stateDir).at(-1) ?? null;
}

/** Removes all but the newest AUTOMATIC_BACKUPS_KEPT automatic backups (backups taken with `state backup` stay). */
export function pruneAutomaticBackups(stateDir: string): void {
  const automatic = automaticBackups(stateDir);
  for (const old of automatic.slice(0, Math.max(0, automatic.length - AUTOMATIC_BACKUPS_KEPT))) rmSync(old, { force: true });
}
