/**
 * Changes made on the platform are put right: a key whose row the platform now holds differently from what the agent
 * last sent (seen by a mirror of the same entity) is marked, and its next row in a file is sent again even if the
 * file did not change it.
 *
 * Before each comparison, the mirror's records stored since the source's last check are compared with the state,
 * each in the agent's canonical form over the fields the file fills (canonical.ts): the agent's own writes come back
 * equal and change nothing; a price set in the platform's UI comes back different and marks the key. The check point
 * (delta_scopes.mirror_checked_at) moves with the marks, in one transaction.
 *
 * Known limit: a mirror page fetched just before the agent sent a row, and stored just after, shows the older row and
 * marks the key: that row is sent once more, never skipped.
 */
import { BUSINESS_KEYS, type Entity } from '../../api/schemas/index.ts';
import { contentOf, markPlatformChanged, type DeltaScope } from '../../store/delta-state.ts';
import { mirroredSince } from '../../store/mirrors.ts';
import type { StateDb } from '../../store/state-db.ts';
import { storedContent, storedKeyHash } from './compare.ts';

const PAGE = 1000;

/** Marks the scope's keys the platform changed since the last check; returns how many. */
export async function markPlatformChanges(db: StateDb, scope: DeltaScope, entity: Entity, generation: number, fields: readonly string[]): Promise<number> {
  if (db.readonly) return 0;
  let after: { syncedAt: string; id: string } | null = null;
  let marked = 0;
  for (;;) {
    const page = await mirroredSince(db, entity, scope.mirror_checked_at, after, PAGE);
    const last = page.at(-1);
    // The check point moves only with the last page: a mirror page's rows share one synced_at, so a check point
    // inside it would skip the rest after a crash. Marks made before a crash are made again, to the same effect.
    if (last === undefined) {
      if (after !== null) await markPlatformChanged(db, scope.id, [], after.syncedAt);
      return marked;
    }
    const changed: bigint[] = [];
    for (const row of page) {
      const record = JSON.parse(row.record) as Record<string, unknown>;
      const keyHash = storedKeyHash(BUSINESS_KEYS[entity](record));
      const sent = await contentOf(db, scope.id, keyHash);
      if (sent === undefined || sent.content === 0n || sent.generation !== generation) continue;
      if (sent.content !== storedContent(entity, record, fields)) changed.push(keyHash);
    }
    const end = page.length < PAGE;
    await markPlatformChanged(db, scope.id, changed, end ? last.synced_at : null);
    marked += changed.length;
    after = { syncedAt: last.synced_at, id: last.id };
    if (end) return marked;
  }
}
