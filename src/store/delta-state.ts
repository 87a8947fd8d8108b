/**
 * What delta push remembers (migration 0008_delta). Owner of delta_scopes, delta_keys and delta_files: nothing else
 * writes them.
 *
 * Checkpoint rule: a key's row is written only after the API accepted it, inside the transaction of the batch
 * checkpoint that records the acceptance (push-ledger.ts commitBatch, `also`), never before: a crash between the
 * answer and the commit leaves the key as it was, so the row is sent again (idempotently), never skipped. A row the
 * API refused is not remembered. A key leaves the state when the API deleted it (missing: delete), in the same
 * transaction that records the deletion.
 *
 * Hashes are 64-bit signed integers (src/ingest/delta/hash.ts), read with safe integers as bigint.
 */
import type { StateDb } from './state-db.ts';

export interface DeltaScope {
  id: number;
  source: string;
  entity: string;
  fingerprint: string | null;
  generation: number;
  full_at: string | null;
  mirror_checked_at: string | null;
}

/**
 * One remembered key, as the comparison reads it: 64-bit hashes as their signed high and unsigned low 32-bit halves
 * (plain numbers: no bigint per row on the hot path).
 */
export interface DeltaKeyRow {
  keyHi: number;
  keyLo: number;
  contentHi: number;
  contentLo: number;
  generation: number;
  price: string | null;
  file_id: number;
}

/** What names a missing key: its text (snapshot sources) and the id the API gave it. */
export interface DeltaKeyDetail {
  key_text: string | null;
  platform_id: string | number | null;
}

/** A row the API accepted: what to remember of it. */
export interface AcceptedKey {
  readonly keyHash: bigint;
  readonly content: bigint;
  readonly price: string | null;
  /** The id from the bulk result (a UUID is stored in 16 bytes), or null when the answer carried none. */
  readonly platformId: string | number | null;
  /** Kept for snapshot sources only. */
  readonly keyText: string | null;
}

/** The scope of `source`, created on first use; its fingerprint is set with `useFingerprint`. */
export function deltaScope(db: StateDb, source: string, entity: string): DeltaScope {
  const existing = findScope(db, source);
  if (existing) return existing;
  // Mirror rows stored before the scope existed cannot show a change to a row it sent: compared from now on.
  db.write(() =>
    db
      .statement(`INSERT OR IGNORE INTO delta_scopes (source, entity, mirror_checked_at, updated_at) VALUES (?, ?, ?, ?)`)
      .run(source, entity, db.now(), db.now()),
  );
  return findScope(db, source) as DeltaScope;
}

export function findScope(db: StateDb, source: string): DeltaScope | undefined {
  return db.statement<DeltaScope>(`SELECT id, source, entity, fingerprint, generation, full_at, mirror_checked_at FROM delta_scopes WHERE source = ?`).get(source);
}

/**
 * The generation of `fingerprint` for the scope: the current one when unchanged, else the next (every key
 * remembered under an older generation then counts as changed). Read-only handles only look.
 */
export function useFingerprint(db: StateDb, scope: DeltaScope, fingerprint: string): { generation: number; changed: boolean } {
  if (scope.fingerprint === fingerprint) return { generation: scope.generation, changed: false };
  const generation = scope.generation + 1;
  if (!db.readonly) {
    db.write(() =>
      db.statement(`UPDATE delta_scopes SET fingerprint = ?, generation = ?, updated_at = ? WHERE id = ?`).run(fingerprint, generation, db.now(), scope.id),
    );
  }
  return { generation, changed: scope.fingerprint !== null };
}

/** Keys remembered for the scope (the "known keys" the brakes measure against). */
export function knownKeys(db: StateDb, scopeId: number): number {
  return db.statement<number>(`SELECT count(*) FROM delta_keys WHERE scope_id = ?`).pluck().get(scopeId) ?? 0;
}

/** Up to `limit` keys of the scope after `after` (exclusive; null: from the start), in key-hash order. */
export function keysAfter(db: StateDb, scopeId: number, after: bigint | null, limit: number): DeltaKeyRow[] {
  const sql = `SELECT key_hash >> 32 AS keyHi, key_hash & 4294967295 AS keyLo, content >> 32 AS contentHi,
      content & 4294967295 AS contentLo, generation, price, file_id
    FROM delta_keys WHERE scope_id = ? ${after === null ? '' : 'AND key_hash > ?'} ORDER BY key_hash LIMIT ?`;
  const statement = db.statement<DeltaKeyRow>(sql);
  return after === null ? statement.all(scopeId, limit) : statement.all(scopeId, after, limit);
}

/** The text and id of one remembered key (a missing key being named). */
export function keyDetail(db: StateDb, scopeId: number, keyHash: bigint): DeltaKeyDetail {
  const row = db.statement<{ key_text: string | null; platform_id: unknown }>(`SELECT key_text, platform_id FROM delta_keys WHERE scope_id = ? AND key_hash = ?`).get(scopeId, keyHash);
  return { key_text: row?.key_text ?? null, platform_id: platformIdOf(row?.platform_id) };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A UUID as 16 bytes (36 as text), an integer as is, anything else as text. */
function storedId(id: string | number | null): string | number | Buffer | null {
  if (typeof id === 'string' && UUID.test(id)) return Buffer.from(id.replace(/-/g, ''), 'hex');
  return id;
}

function platformIdOf(value: unknown): string | number | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Uint8Array && value.length === 16) {
    const hex = Buffer.from(value).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  return typeof value === 'number' || typeof value === 'string' ? value : null;
}

/**
 * Remembers rows the API accepted. Call inside the transaction that commits their batch (commitBatch's `also`):
 * it runs no transaction of its own.
 */
export function rememberAccepted(db: StateDb, scopeId: number, generation: number, fileId: number, rows: readonly AcceptedKey[]): void {
  const upsert = db.statement(
    `INSERT INTO delta_keys (scope_id, key_hash, content, generation, price, platform_id, file_id, key_text)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (scope_id, key_hash) DO UPDATE SET content = excluded.content, generation = excluded.generation,
       price = excluded.price, platform_id = coalesce(excluded.platform_id, platform_id), file_id = excluded.file_id,
       key_text = coalesce(excluded.key_text, key_text)`,
  );
  for (const r of rows) upsert.run(scopeId, r.keyHash, r.content, generation, r.price, storedId(r.platformId), fileId, r.keyText);
}

/**
 * Keys whose row the platform changed since the agent sent it (a mirror showed another content): their next row in a
 * file is sent again whatever it holds.
 */
export function markPlatformChanged(db: StateDb, scopeId: number, keyHashes: readonly bigint[], mirrorCheckedAt: string | null): void {
  db.write(() => {
    const stale = db.statement(`UPDATE delta_keys SET content = 0 WHERE scope_id = ? AND key_hash = ?`);
    for (const key of keyHashes) stale.run(scopeId, key);
    if (mirrorCheckedAt !== null) {
      db.statement(`UPDATE delta_scopes SET mirror_checked_at = ?, updated_at = ? WHERE id = ?`).run(mirrorCheckedAt, db.now(), scopeId);
    }
  });
}

/** The content of one key, or undefined (a mirror's row compared with what was sent). */
export function contentOf(db: StateDb, scopeId: number, keyHash: bigint): { content: bigint; generation: number } | undefined {
  const statement = db.statement<{ content: bigint; generation: bigint }>(`SELECT content, generation FROM delta_keys WHERE scope_id = ? AND key_hash = ?`);
  statement.safeIntegers(true);
  const row = statement.get(scopeId, keyHash);
  return row ? { content: row.content, generation: Number(row.generation) } : undefined;
}

/** Keys the API deleted: forgotten. Call inside the transaction that records the deletion. */
export function forgetKeys(db: StateDb, scopeId: number, keyHashes: readonly bigint[]): void {
  const remove = db.statement(`DELETE FROM delta_keys WHERE scope_id = ? AND key_hash = ?`);
  for (const key of keyHashes) remove.run(scopeId, key);
}

/** A full send of the scope finished at `at` (delta.full_every counts from here). */
export function recordFullSend(db: StateDb, scopeId: number, at: string): void {
  db.write(() => db.statement(`UPDATE delta_scopes SET full_at = ?, updated_at = ? WHERE id = ?`).run(at, db.now(), scopeId));
}

/** What delta decided for a file (stored when the file's comparison is done, updated as it goes on). */
export interface DeltaFileRecord {
  file_id: number;
  mode: 'delta' | 'full';
  reason: string | null;
  known: number;
  unchanged: number;
  changed: number;
  new_keys: number;
  remapped: number;
  platform_changed: number;
  missing: number;
  deleted: number;
  held_at: string | null;
  held_path: string | null;
  released_at: string | null;
  /** JSON: the brakes that stopped the file, with their figures. */
  brakes: string | null;
}

export function saveDeltaFile(db: StateDb, record: Omit<DeltaFileRecord, 'deleted' | 'held_at' | 'held_path' | 'released_at'> & Partial<DeltaFileRecord>): void {
  db.write(() =>
    db
      .statement(
        `INSERT INTO delta_files (file_id, mode, reason, known, unchanged, changed, new_keys, remapped, platform_changed, missing,
           deleted, held_at, held_path, released_at, brakes, updated_at)
         VALUES (@file_id, @mode, @reason, @known, @unchanged, @changed, @new_keys, @remapped, @platform_changed, @missing,
           @deleted, @held_at, @held_path, @released_at, @brakes, @now)
         ON CONFLICT (file_id) DO UPDATE SET mode = excluded.mode, reason = excluded.reason, known = excluded.known,
           unchanged = excluded.unchanged, changed = excluded.changed, new_keys = excluded.new_keys,
           remapped = excluded.remapped, platform_changed = excluded.platform_changed, missing = excluded.missing,
           deleted = max(deleted, excluded.deleted), held_at = coalesce(excluded.held_at, held_at),
           held_path = coalesce(excluded.held_path, held_path), released_at = coalesce(excluded.released_at, released_at),
           brakes = excluded.brakes, updated_at = excluded.updated_at`,
      )
      .run({ deleted: 0, held_at: null, held_path: null, released_at: null, ...record, now: db.now() }),
  );
}

export function deltaFile(db: StateDb, fileId: number): DeltaFileRecord | undefined {
  return db.statement<DeltaFileRecord>(`SELECT file_id, mode, reason, known, unchanged, changed, new_keys, remapped, platform_changed,
    missing, deleted, held_at, held_path, released_at, brakes FROM delta_files WHERE file_id = ?`).get(fileId);
}


/** A file held by the brakes, as `status` and `files release` show it. */
export interface HeldFileRow {
  file_id: number;
  source: string;
  entity: string;
  name: string;
  held_path: string;
  held_at: string;
  sha256: string;
  brakes: string | null;
}

/** Files held and not released, oldest first (optionally of one source). */
export function heldFiles(db: StateDb, source?: string): HeldFileRow[] {
  const rows = db
    .statement<HeldFileRow>(
      `SELECT d.file_id, f.source, f.entity, f.original_name AS name, d.held_path, d.held_at, f.sha256, d.brakes
       FROM delta_files d JOIN push_files f ON f.id = d.file_id
       WHERE d.held_at IS NOT NULL AND d.released_at IS NULL ORDER BY d.file_id`,
    )
    .all();
  return source === undefined ? rows : rows.filter((r) => r.source === source);
}

/** A person released the held file (`at`; null undoes it): its content's next claim is sent without the brakes. */
export function releaseHeld(db: StateDb, fileId: number, at: string | null): void {
  db.write(() => db.statement(`UPDATE delta_files SET released_at = ?, updated_at = ? WHERE file_id = ?`).run(at, db.now(), fileId));
}

/**
 * Whether the file `fileId` (just claimed) is the content of a released held file of the same source; the release is
 * used up by it (a later drop of the same content is braked again).
 */
export function takeRelease(db: StateDb, fileId: number, source: string, sha256: string): boolean {
  return db.write(() => {
    const release = db
      .statement<{ file_id: number }>(
        `SELECT d.file_id FROM delta_files d JOIN push_files f ON f.id = d.file_id
         WHERE f.source = ? AND f.sha256 = ? AND d.released_at IS NOT NULL AND (d.released_for IS NULL OR d.released_for = ?)
         ORDER BY d.file_id LIMIT 1`,
      )
      .get(source, sha256, fileId);
    if (!release) return false;
    db.statement(`UPDATE delta_files SET released_for = ? WHERE file_id = ?`).run(fileId, release.file_id);
    return true;
  });
}

/** Missing keys the API deleted for the file (in the transaction that forgets them). */
export function addDeleted(db: StateDb, fileId: number, count: number): void {
  db.statement(`UPDATE delta_files SET deleted = deleted + ?, updated_at = ? WHERE file_id = ?`).run(count, db.now(), fileId);
}
