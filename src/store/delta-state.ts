/**
 * What delta push remembers (migration 0008_delta). Owner of delta_scopes, delta_keys and delta_files: nothing else
 * writes them.
 *
 * Checkpoint rule: a key's row is written only after the API accepted it, inside the transaction of the batch
 * checkpoint that records the acceptance (push-ledger.ts commitBatch, `also`: the step `rememberAccepted` returns),
 * never before: a crash between the answer and the commit leaves the key as it was, so the row is sent again
 * (idempotently), never skipped. A row the API refused is not remembered; its key is marked refused (delta_refused, in
 * the same transaction), so that its next row is sent again and counted as such, until the API accepts a row of it.
 * A key leaves the state when the API deleted it (missing: delete), in the same transaction that records the deletion.
 *
 * Hashes are 64-bit signed integers (src/ingest/delta/fast/hash.ts): bound as decimal text (the INTEGER column takes it as
 * the integer on both backends) and read as their 32-bit halves or as text, so no driver needs 64-bit integers.
 */
import type { Dialect } from './dialect.ts';
import { sqlOf, type Tx } from './sql-db.ts';
import { openReadOnlySqlite } from './sqlite/read-only-scan.ts';
import type { StateDb } from './state-db.ts';

/** The ledger's error code of a file the brakes held (status failed, in held/): shown as held, not failed. */
export const HELD_ERROR_CODE = 'HELD';

/** Work done inside another family's transaction (a batch checkpoint): opaque above store/. */
export type TxStep = (tx: Tx) => Promise<void>;

export interface DeltaScope {
  id: number;
  source: string;
  entity: string;
  fingerprint: string | null;
  generation: number;
  full_at: string | null;
  mirror_checked_at: string | null;
  /** The seed of the files for which line mode last gave way (migration 0015), or null. */
  line_failed_seed: string | null;
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
  /** The line hash of the row as accepted (a 48-bit integer; text from PostgreSQL), or null (migration 0014). */
  line_hash: number | string | null;
}

/** What names a missing key: its text (snapshot sources) and the id the API gave it; its price as remembered. */
export interface DeltaKeyDetail {
  key_text: string | null;
  platform_id: string | number | null;
  price: string | null;
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
  /** The line hash of the line it came from (ingest/delta/fast/line-hash.ts), or NaN: none. */
  readonly lineHash: number;
}

/** The scope of `source`, created on first use; its fingerprint is set with `useFingerprint`. */
export async function deltaScope(db: StateDb, source: string, entity: string): Promise<DeltaScope> {
  const existing = await findScope(db, source);
  if (existing) return existing;
  // Mirror rows stored before the scope existed cannot show a change to a row it sent: compared from now on.
  await sqlOf(db).write((tx) =>
    tx.run(`INSERT INTO delta_scopes (source, entity, mirror_checked_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (source) DO NOTHING`, [
      source,
      entity,
      tx.now,
      tx.now,
    ]),
  );
  return (await findScope(db, source)) as DeltaScope;
}

export async function findScope(db: StateDb, source: string): Promise<DeltaScope | undefined> {
  return sqlOf(db).get<DeltaScope>(`SELECT id, source, entity, fingerprint, generation, full_at, mirror_checked_at, line_failed_seed FROM delta_scopes WHERE source = ?`, [source]);
}

/**
 * The generation of `fingerprint` for the scope: the current one when unchanged, else the next (every key
 * remembered under an older generation then counts as changed). Read-only handles only look.
 */
export async function useFingerprint(db: StateDb, scope: DeltaScope, fingerprint: string): Promise<{ generation: number; changed: boolean }> {
  if (scope.fingerprint === fingerprint) return { generation: scope.generation, changed: false };
  const generation = scope.generation + 1;
  if (!db.readonly) {
    await sqlOf(db).write((tx) =>
      tx.run(`UPDATE delta_scopes SET fingerprint = ?, generation = ?, updated_at = ? WHERE id = ?`, [fingerprint, generation, tx.now, scope.id]),
    );
  }
  return { generation, changed: scope.fingerprint !== null };
}

/** The columns of a remembered key as the comparison reads it (keysAfter, scanDeltaKeys). */
const DELTA_KEY_COLUMNS = `key_hash >> 32 AS "keyHi", key_hash & 4294967295 AS "keyLo", content >> 32 AS "contentHi",
      content & 4294967295 AS "contentLo", generation, price, file_id, line_hash`;

/**
 * What a merge in line mode reads (ingest/delta/compare.ts): the key, its line hash, and how its generation and file
 * compare with the file's (LineKeyTuple), computed here: half the columns of DELTA_KEY_COLUMNS, and about a fifth less
 * time per key. Its content and price are not needed (the few lines that need them look them up: keysByHash). A key
 * the platform changed has no line hash (markPlatformChanged), so it never passes for unchanged by its line.
 */
const DELTA_KEY_LINE_COLUMNS = `key_hash >> 32 AS "keyHi", key_hash & 4294967295 AS "keyLo",
      CASE WHEN generation <> ? THEN 2 WHEN file_id = ? THEN 1 ELSE 0 END AS status, line_hash`;

/** A merge in line mode reads keys for a file of this generation (the source's current one) and ledger id. */
export interface LineColumns {
  readonly generation: number;
  readonly fileId: number;
}

function keysAfterSql(after: bigint | null, before: bigint | null, line = false): string {
  return `SELECT ${line ? DELTA_KEY_LINE_COLUMNS : DELTA_KEY_COLUMNS}
    FROM delta_keys WHERE scope_id = ? ${after === null ? '' : 'AND key_hash > ?'} ${before === null ? '' : 'AND key_hash < ?'}
    ORDER BY key_hash LIMIT ?`;
}

function keysAfterParams(scopeId: number, after: bigint | null, before: bigint | null, limit: number): (number | string)[] {
  return [scopeId, ...(after === null ? [] : [after.toString()]), ...(before === null ? [] : [before.toString()]), limit];
}

/**
 * The remembered rows of `keyHashes` (signed 64-bit), those the scope has, in no particular order: delta push's line
 * mode looks up the few keys whose line it could not settle by its hash (compare.ts). At most LOOKUP_KEYS at a time.
 */
export async function keysByHash(db: StateDb, scopeId: number, keyHashes: readonly bigint[]): Promise<DeltaKeyRow[]> {
  if (keyHashes.length === 0) return [];
  const { sql, params } = keysByHashQuery(scopeId, keyHashes);
  return numericKeyRows(await sqlOf(db).all<DeltaKeyRow>(sql, params));
}

/**
 * keysByHash of one scope on a read-only connection of its own to a SQLite state file, for a thread other than the one
 * holding the agent's connection (ingest/delta/half-worker.ts settles its half's undecided lines). Close it when done.
 */
export function keyLookup(path: string, scopeId: number): { lookup(keyHashes: readonly bigint[]): DeltaKeyRow[]; close(): void } {
  const db = openReadOnlySqlite(path);
  return {
    lookup(keyHashes) {
      if (keyHashes.length === 0) return [];
      const { sql, params } = keysByHashQuery(scopeId, keyHashes);
      return db.all<DeltaKeyRow>(sql, params);
    },
    close: () => db.close(),
  };
}

function keysByHashQuery(scopeId: number, keyHashes: readonly bigint[]): { sql: string; params: (number | string)[] } {
  if (keyHashes.length > LOOKUP_KEYS) throw new Error(`keysByHash takes at most ${LOOKUP_KEYS} keys`);
  return {
    sql: `SELECT ${DELTA_KEY_COLUMNS} FROM delta_keys WHERE scope_id = ? AND key_hash IN (${keyHashes.map(() => '?').join(', ')})`,
    params: [scopeId, ...keyHashes.map((h) => h.toString())],
  };
}

/**
 * Of a sample of the scope's keys (the first `sample` in key-hash order: a random sample, the hash being uniform), the
 * share remembered with a line hash under `generation`; null when none is remembered. Line mode
 * (ingest/delta/compare.ts) is not worth trying where most keys lack one (after the upgrade that brought line hashes,
 * or a change of mapping), nor for a source's first file (every key is new).
 */
export async function lineHashShare(db: StateDb, scopeId: number, generation: number, sample = 1024): Promise<number | null> {
  const rows = await sqlOf(db).all<{ generation: number; hashed: number }>(
    `SELECT generation, CASE WHEN line_hash IS NULL THEN 0 ELSE 1 END AS hashed FROM delta_keys WHERE scope_id = ? ORDER BY key_hash LIMIT ?`,
    [scopeId, sample],
  );
  if (rows.length === 0) return null;
  return rows.filter((r) => Number(r.generation) === generation && Number(r.hashed) === 1).length / rows.length;
}

/** Keys keysByHash looks up at once (bound parameters: far below both backends' limits). */
export const LOOKUP_KEYS = 500;

/** PostgreSQL answers a bigint as text: the halves fit a number. SQLite answers numbers: no copy per row. */
function numericKeyRows(rows: DeltaKeyRow[]): DeltaKeyRow[] {
  if (rows.length === 0 || typeof rows[0]?.keyHi === 'number') return rows;
  return rows.map((r) => ({
    ...r,
    keyHi: Number(r.keyHi),
    keyLo: Number(r.keyLo),
    contentHi: Number(r.contentHi),
    contentLo: Number(r.contentLo),
    line_hash: r.line_hash === null ? null : Number(r.line_hash),
  }));
}

/** Up to `limit` keys of the scope after `after` (exclusive; null: from the start), in key-hash order. */
export async function keysAfter(db: StateDb, scopeId: number, after: bigint | null, limit: number): Promise<DeltaKeyRow[]> {
  return numericKeyRows(await sqlOf(db).all<DeltaKeyRow>(keysAfterSql(after, null), keysAfterParams(scopeId, after, null, limit)));
}

/**
 * A remembered key as a merge in line mode reads it: status 0 under the file's generation and from another file, 1
 * from this file (sent by an earlier attempt at it), 2 under another generation; the line hash or null.
 */
export type LineKeyTuple = [keyHi: number, keyLo: number, status: 0 | 1 | 2, lineHash: number | null];

/** A remembered key as scanDeltaKeys reads it: DeltaKeyRow's columns in its order, without an object per key. */
export type DeltaKeyTuple = [
  keyHi: number,
  keyLo: number,
  contentHi: number,
  contentLo: number,
  generation: number,
  price: string | null,
  fileId: number,
  lineHash: number | null,
];

/**
 * Every key of the scope after `after` and before `before` (both exclusive; null: unbounded) in key-hash order, in
 * pages of `pageSize`, from a SQLite state file on a read-only connection of its own (the comparison reads them apart
 * from the agent's connection, on two threads: ingest/delta/two-halves.ts), in one snapshot. The connection is closed
 * when the generator ends or is returned.
 */
export function scanDeltaKeys(path: string, scopeId: number, pageSize: number, after?: bigint | null, before?: bigint | null): Generator<DeltaKeyTuple[]>;
/** The same, as a merge in line mode reads the keys (LineKeyTuple). */
export function scanDeltaKeys(path: string, scopeId: number, pageSize: number, after: bigint | null, before: bigint | null, line: LineColumns): Generator<LineKeyTuple[]>;
export function* scanDeltaKeys(
  path: string,
  scopeId: number,
  pageSize: number,
  after: bigint | null = null,
  before: bigint | null = null,
  line?: LineColumns,
): Generator<(DeltaKeyTuple | LineKeyTuple)[]> {
  const db = openReadOnlySqlite(path);
  try {
    let from = after;
    const sql = (at: bigint | null) => keysAfterSql(at, before, line !== undefined);
    const lineParams = line === undefined ? [] : [line.generation, line.fileId];
    for (;;) {
      const rows = db.raw<DeltaKeyTuple | LineKeyTuple>(sql(from), [...lineParams, ...keysAfterParams(scopeId, from, before, pageSize)]);
      if (rows.length > 0) yield rows;
      const last = rows.at(-1);
      if (last === undefined || rows.length < pageSize) return;
      from = BigInt.asIntN(64, (BigInt(last[0] >>> 0) << 32n) | BigInt(last[1] >>> 0));
    }
  } finally {
    db.close();
  }
}

/** The text, id and price of one remembered key (a missing key being named, a large price move shown). */
export async function keyDetail(db: StateDb, scopeId: number, keyHash: bigint): Promise<DeltaKeyDetail> {
  const row = await sqlOf(db).get<{ key_text: string | null; platform_id: unknown; price: string | null }>(`SELECT key_text, platform_id, price FROM delta_keys WHERE scope_id = ? AND key_hash = ?`, [
    scopeId,
    keyHash.toString(),
  ]);
  return { key_text: row?.key_text ?? null, platform_id: platformIdOf(row?.platform_id), price: row?.price ?? null };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * SQLite: a UUID as 16 bytes (36 as text), anything else as text. PostgreSQL: text (a column has one type there;
 * migration 0008 postgres).
 */
function storedId(id: string | number | null, dialect: Dialect): string | Uint8Array | null {
  if (dialect.uuidsAsBytes && typeof id === 'string' && UUID.test(id)) return Buffer.from(id.replace(/-/g, ''), 'hex');
  return id === null ? null : String(id);
}

/** A platform id as stored on one backend (either's form), re-stored the way `dialect` keeps it (a copy between them). */
export function restoredPlatformId(stored: unknown, dialect: Dialect): string | Uint8Array | null {
  return storedId(platformIdOf(stored), dialect);
}

export function platformIdOf(value: unknown): string | number | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Uint8Array && value.length === 16) {
    const hex = Buffer.from(value).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  return typeof value === 'number' || typeof value === 'string' ? value : null;
}

const KEY_COLUMNS = ['scope_id', 'key_hash', 'content', 'generation', 'price', 'platform_id', 'file_id', 'key_text', 'line_hash'];

/**
 * The step that remembers rows the API accepted, for the transaction that commits their batch (commitBatch's `also`).
 * A row the answer gave no id keeps the id remembered before (missing: delete needs it). `refused`: the key hashes of
 * the batch's rows the API refused, marked (an accepted key's mark is cleared).
 */
export function rememberAccepted(scopeId: number, generation: number, fileId: number, rows: readonly AcceptedKey[], refused: readonly bigint[] = []): TxStep {
  const update = ['content', 'generation', 'price', 'file_id', 'key_text', 'line_hash'];
  return async (tx) => {
    // Most scopes have no refused key: one look per batch, not a statement per row.
    if (rows.length > 0 && (await tx.value(`SELECT 1 FROM delta_refused WHERE scope_id = ? LIMIT 1`, [scopeId])) !== undefined) {
      for (const r of rows) await tx.run(`DELETE FROM delta_refused WHERE scope_id = ? AND key_hash = ?`, [scopeId, r.keyHash.toString()]);
    }
    if (refused.length > 0) {
      const marks = refused.map((key) => [scopeId, key.toString()]);
      await tx.insert({ table: 'delta_refused', columns: ['scope_id', 'key_hash'], onConflict: { target: ['scope_id', 'key_hash'] } }, marks);
    }
    const values = (r: AcceptedKey) => [
      scopeId,
      r.keyHash.toString(),
      r.content.toString(),
      generation,
      r.price,
      storedId(r.platformId, tx.dialect),
      fileId,
      r.keyText,
      Number.isNaN(r.lineHash) ? null : String(r.lineHash),
    ];
    const withId = rows.filter((r) => r.platformId !== null).map(values);
    const withoutId = rows.filter((r) => r.platformId === null).map(values);
    const target = ['scope_id', 'key_hash'];
    if (withId.length > 0) await tx.insert({ table: 'delta_keys', columns: KEY_COLUMNS, onConflict: { target, update: [...update, 'platform_id'] } }, withId);
    if (withoutId.length > 0) await tx.insert({ table: 'delta_keys', columns: KEY_COLUMNS, onConflict: { target, update } }, withoutId);
  };
}

/**
 * Keys whose row the platform changed since the agent sent it (a mirror showed another content): their next row in a
 * file is sent again whatever it holds.
 */
export async function markPlatformChanged(db: StateDb, scopeId: number, keyHashes: readonly bigint[], mirrorCheckedAt: string | null): Promise<void> {
  await sqlOf(db).write(async (tx) => {
    for (const key of keyHashes) await tx.run(`UPDATE delta_keys SET content = 0, line_hash = NULL WHERE scope_id = ? AND key_hash = ?`, [scopeId, key.toString()]);
    if (mirrorCheckedAt !== null) {
      await tx.run(`UPDATE delta_scopes SET mirror_checked_at = ?, updated_at = ? WHERE id = ?`, [mirrorCheckedAt, tx.now, scopeId]);
    }
  });
}

/** The content of one key, or undefined (a mirror's row compared with what was sent). */
export async function contentOf(db: StateDb, scopeId: number, keyHash: bigint): Promise<{ content: bigint; generation: number } | undefined> {
  const row = await sqlOf(db).get<{ content: string; generation: number }>(
    `SELECT CAST(content AS TEXT) AS content, generation FROM delta_keys WHERE scope_id = ? AND key_hash = ?`,
    [scopeId, keyHash.toString()],
  );
  return row ? { content: BigInt(row.content), generation: Number(row.generation) } : undefined;
}

/**
 * The keys of the scope whose last row the API refused (signed 64-bit): few (a refused row is put right or dropped by a
 * person), so held in memory by the comparison.
 */
export async function refusedKeys(db: StateDb, scopeId: number): Promise<bigint[]> {
  const rows = await sqlOf(db).all<{ key_hash: string }>(`SELECT CAST(key_hash AS TEXT) AS key_hash FROM delta_refused WHERE scope_id = ?`, [scopeId]);
  return rows.map((r) => BigInt(r.key_hash));
}

/** Keys the API deleted for the file: forgotten, and counted as deleted, in one transaction. */
export async function forgetDeleted(db: StateDb, scopeId: number, fileId: number, keyHashes: readonly bigint[]): Promise<void> {
  await sqlOf(db).write(async (tx) => {
    for (const key of keyHashes) await tx.run(`DELETE FROM delta_keys WHERE scope_id = ? AND key_hash = ?`, [scopeId, key.toString()]);
    await tx.run(`UPDATE delta_files SET deleted = deleted + ?, updated_at = ? WHERE file_id = ?`, [keyHashes.length, tx.now, fileId]);
  });
}

/** A full send of the scope finished at `at` (delta.full_every counts from here). */
/**
 * Line mode gave way for files of `seed` (ingest/delta/fast/line-hash.ts seedId), or null: it may be tried again (every
 * row of the source is being sent again, and remembered with its line hash).
 */
export async function setLineFailedSeed(db: StateDb, scopeId: number, seed: string | null): Promise<void> {
  await sqlOf(db).write((tx) => tx.run(`UPDATE delta_scopes SET line_failed_seed = ?, updated_at = ? WHERE id = ?`, [seed, tx.now, scopeId]));
}

export async function recordFullSend(db: StateDb, scopeId: number, at: string): Promise<void> {
  await sqlOf(db).write((tx) => tx.run(`UPDATE delta_scopes SET full_at = ?, updated_at = ? WHERE id = ?`, [at, tx.now, scopeId]));
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
  /** Sent because the API refused their key's row before (null: compared before migration 0020). */
  refused_before: number | null;
  /** Sent though unchanged: a full send (null: compared before migration 0020). */
  forced: number | null;
  missing: number;
  deleted: number;
  held_at: string | null;
  held_path: string | null;
  released_at: string | null;
  /** JSON: the brakes that stopped the file, with their figures. */
  brakes: string | null;
}

const FILE_COLUMNS = [
  'file_id', 'mode', 'reason', 'known', 'unchanged', 'changed', 'new_keys', 'remapped', 'platform_changed', 'refused_before',
  'forced', 'missing', 'deleted', 'held_at', 'held_path', 'released_at', 'brakes', 'updated_at',
] as const;

export async function saveDeltaFile(db: StateDb, record: Omit<DeltaFileRecord, 'deleted' | 'held_at' | 'held_path' | 'released_at' | 'refused_before' | 'forced'> & Partial<DeltaFileRecord>): Promise<void> {
  const sql = sqlOf(db);
  await sql.write((tx) => {
    const full: Record<string, string | number | null> = { deleted: 0, held_at: null, held_path: null, released_at: null, refused_before: null, forced: null, ...record, updated_at: tx.now };
    return tx.run(
      `INSERT INTO delta_files (${FILE_COLUMNS.join(', ')}) VALUES (${FILE_COLUMNS.map(() => '?').join(', ')})
       ON CONFLICT (file_id) DO UPDATE SET mode = excluded.mode, reason = excluded.reason, known = excluded.known,
         unchanged = excluded.unchanged, changed = excluded.changed, new_keys = excluded.new_keys,
         remapped = excluded.remapped, platform_changed = excluded.platform_changed, refused_before = excluded.refused_before,
         forced = excluded.forced, missing = excluded.missing,
         deleted = ${sql.dialect.greatest('delta_files.deleted', 'excluded.deleted')},
         held_at = coalesce(excluded.held_at, delta_files.held_at), held_path = coalesce(excluded.held_path, delta_files.held_path),
         released_at = coalesce(excluded.released_at, delta_files.released_at), brakes = excluded.brakes, updated_at = excluded.updated_at`,
      FILE_COLUMNS.map((c) => full[c] ?? null),
    );
  });
}

export async function deltaFile(db: StateDb, fileId: number): Promise<DeltaFileRecord | undefined> {
  return sqlOf(db).get<DeltaFileRecord>(
    `SELECT file_id, mode, reason, known, unchanged, changed, new_keys, remapped, platform_changed, refused_before, forced,
       missing, deleted, held_at, held_path, released_at, brakes FROM delta_files WHERE file_id = ?`,
    [fileId],
  );
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
export async function heldFiles(db: StateDb, source?: string): Promise<HeldFileRow[]> {
  const rows = await sqlOf(db).all<HeldFileRow>(
    `SELECT d.file_id, f.source, f.entity, f.original_name AS name, d.held_path, d.held_at, f.sha256, d.brakes
     FROM delta_files d JOIN push_files f ON f.id = d.file_id
     WHERE d.held_at IS NOT NULL AND d.released_at IS NULL ORDER BY d.file_id`,
  );
  return source === undefined ? rows : rows.filter((r) => r.source === source);
}

/** A person released the held file (`at`; null undoes it): its content's next claim is sent without the brakes. */
export async function releaseHeld(db: StateDb, fileId: number, at: string | null): Promise<void> {
  await sqlOf(db).write((tx) => tx.run(`UPDATE delta_files SET released_at = ?, updated_at = ? WHERE file_id = ?`, [at, tx.now, fileId]));
}

/**
 * Whether the file `fileId` (just claimed) is the content of a released held file of the same source; the release is
 * used up by it (a later drop of the same content is braked again).
 */
export async function takeRelease(db: StateDb, fileId: number, source: string, sha256: string): Promise<boolean> {
  return sqlOf(db).write(async (tx) => {
    const release = await tx.get<{ file_id: number }>(
      `SELECT d.file_id FROM delta_files d JOIN push_files f ON f.id = d.file_id
       WHERE f.source = ? AND f.sha256 = ? AND d.released_at IS NOT NULL AND (d.released_for IS NULL OR d.released_for = ?)
       ORDER BY d.file_id LIMIT 1`,
      [source, sha256, fileId],
    );
    if (!release) return false;
    await tx.run(`UPDATE delta_files SET released_for = ? WHERE file_id = ?`, [fileId, release.file_id]);
    return true;
  });
}
