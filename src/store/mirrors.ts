/**
 * Incremental mirrors: pages upserted by key, the listing's cursor stored with each page, the watermark moved when
 * a listing completes. Owner of the mirror_* tables and stream_state.
 *
 * A listing's life: the first `upsertMirrorPage` starts it (listing_started_at), each page stores its rows and the
 * next cursor together, `completeListing` moves the watermark and clears the cursor. A restart finds
 * listing_started_at set and continues from `cursor`, with `updated_after` = the unchanged watermark.
 * `updated_after` is inclusive: the rows at the watermark come again and the upsert absorbs them.
 *
 * The spec gives no order for a listing's rows. A row updated while the listing runs may sit on a page already
 * read, and a row on a later page may carry a later updated_at: a watermark at the largest updated_at seen would
 * skip the first row's change for good. So the watermark never passes the listing's start (the server's Date on its
 * first page) less LISTING_START_MARGIN_MS: the next run reads every change made since the listing began again.
 */
import type { Selectable } from 'kysely';
import { instantOf } from '../api/schemas/index.ts';
import { StoreError } from './errors.ts';
import { type MirrorRow, type MirrorStream, mirrorTableOf } from './mirror-tables.ts';
import type { StreamStateTable } from './schema.ts';
import { sqlOf, type Queryable, type SqlParams } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

export type StreamState = Selectable<StreamStateTable>;

/**
 * How far before the listing's start the watermark may go at most: the server read its first page before it
 * stamped the response's Date (to the second), and the clocks behind its updated_at may differ from that one.
 */
export const LISTING_START_MARGIN_MS = 60_000;

export interface PageOptions {
  /**
   * The server's `Date` when this listing started (the first page's response). Used only by the first page of a
   * listing; the watermark of a stream whose rows carry no updated_at. Default: the agent's clock.
   */
  listingStartedAt?: string;
  /**
   * Grid streams whose rows carry no key: each row is keyed by its number in the listing (the rows stored before
   * this page plus its place in it). The listing must be a full one (no updated_after), completed with
   * `keys: 'row_number'`.
   */
  rowNumbers?: boolean;
}

/** How the rows of the listing being completed were keyed (grid streams; see PageOptions.rowNumbers). */
export interface CompleteOptions {
  /** Overrides the computed watermark. */
  watermark?: string;
  /**
   * `row_number`: a snapshot listing; the grid's rows numbered past its end are deleted, so the table holds the
   * snapshot exactly. `own`: rows keyed by grid_item_id; rows an earlier snapshot keyed by number are deleted.
   */
  keys?: 'own' | 'row_number';
}

/**
 * Upserts one page by key and stores `nextCursor`, in one transaction.
 *
 * Checkpoint rule: the cursor moves only here, together with the rows of the page it follows. After a crash the
 * listing resumes at the last committed cursor; a page that was fetched but not committed is fetched again.
 * A page is the server's state at fetch time, so a row always overwrites the stored one.
 */
export async function upsertMirrorPage<S extends MirrorStream>(
  db: StateDb,
  stream: S,
  rows: readonly MirrorRow<S>[],
  nextCursor: string | null,
  options: PageOptions = {},
): Promise<StreamState> {
  const { table, gridId } = mirrorTableOf(stream);
  const columns = [...table.columns, 'updated_at', 'record', 'synced_at'];
  const upsert = {
    table: table.table,
    columns,
    onConflict: { target: table.keys, update: columns.filter((c) => !table.keys.includes(c)) },
  };
  return sqlOf(db).write(async (tx) => {
    const now = tx.now;
    const before = await stateOf(tx, stream);
    let maxUpdatedAt = before?.listing_max_updated_at ?? null;
    const firstNumber = options.rowNumbers === true ? (before?.listing_started_at == null ? 0 : before.listing_rows) + 1 : null;
    const values: SqlParams[] = rows.map((row, i) => {
      const updatedAt = table.updatedAt(row);
      maxUpdatedAt = later(maxUpdatedAt, updatedAt);
      return [...table.values(row, gridId, firstNumber === null ? null : firstNumber + i), updatedAt, JSON.stringify(row), now];
    });
    await tx.insert(upsert, values);
    const started = options.listingStartedAt ?? now;
    return saveState(
      tx,
      stream,
      `INSERT INTO stream_state (stream, cursor, listing_started_at, listing_max_updated_at, listing_rows, updated_at)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (stream) DO UPDATE SET cursor = excluded.cursor,
         listing_started_at = coalesce(stream_state.listing_started_at, excluded.listing_started_at),
         listing_max_updated_at = excluded.listing_max_updated_at,
         listing_rows = stream_state.listing_rows + excluded.listing_rows, updated_at = excluded.updated_at`,
      [stream, nextCursor, started, maxUpdatedAt, rows.length, now],
    );
  });
}

/**
 * Ends the listing in progress: the watermark moves to the largest updated_at stored during the listing, but never
 * past listing_started_at less LISTING_START_MARGIN_MS (see the top of this file); where its rows carried none, to
 * listing_started_at; after an empty listing it stays. `watermark` overrides the rule.
 * Clears the cursor and the error, sets last_success_at. For grid streams, `keys` says how the listing keyed its
 * rows, and the rows that do not belong to the grid as now listed go (CompleteOptions).
 */
export async function completeListing(db: StateDb, stream: MirrorStream, options: CompleteOptions = {}): Promise<StreamState> {
  const { table, gridId } = mirrorTableOf(stream);
  const { watermark } = options;
  return sqlOf(db).write(async (tx) => {
    const state = await stateOf(tx, stream);
    if (table.table === 'mirror_grid_rows' && options.keys === 'row_number') {
      await tx.run('DELETE FROM mirror_grid_rows WHERE grid_id = ? AND grid_item_id > ?', [gridId, state?.listing_rows ?? 0]);
    } else if (table.table === 'mirror_grid_rows' && options.keys === 'own') {
      const key = tx.dialect.jsonText('record', 'grid_item_id');
      await tx.run(`DELETE FROM mirror_grid_rows WHERE grid_id = ? AND ${key} IS NULL`, [gridId]);
    }
    const computed = !state
      ? null
      : state.listing_max_updated_at === null
        ? (state.listing_rows > 0 ? state.listing_started_at : state.watermark)
        : notPastListingStart(state.listing_max_updated_at, state.listing_started_at);
    return saveState(
      tx,
      stream,
      `INSERT INTO stream_state (stream, watermark, listing_rows, last_success_at, updated_at)
       VALUES (?, ?, 0, ?, ?)
       ON CONFLICT (stream) DO UPDATE SET watermark = excluded.watermark, cursor = NULL, listing_started_at = NULL,
         listing_max_updated_at = NULL, listing_rows = 0, last_success_at = excluded.last_success_at, last_error = NULL,
         last_error_at = NULL, updated_at = excluded.updated_at`,
      [stream, watermark ?? computed, tx.now, tx.now],
    );
  });
}

/** Records why a run failed; the cursor stays, so the next run resumes the listing. */
export async function recordStreamError(db: StateDb, stream: MirrorStream, message: string): Promise<StreamState> {
  mirrorTableOf(stream);
  return sqlOf(db).write((tx) =>
    saveState(
      tx,
      stream,
      `INSERT INTO stream_state (stream, last_error, last_error_at, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (stream) DO UPDATE SET last_error = excluded.last_error, last_error_at = excluded.last_error_at,
         updated_at = excluded.updated_at`,
      [stream, message, tx.now, tx.now],
    ),
  );
}

/**
 * Forgets the listing in progress (its cursor) but keeps the watermark: the next listing starts again from the
 * first page with the same updated_after. For a stored cursor the server no longer accepts; rows stay.
 */
export function restartListing(db: StateDb, stream: MirrorStream): Promise<StreamState> {
  return forgetListing(db, stream, 'keep watermark');
}

/** Forgets watermark and cursor (`pull --stream NAME --full`); the next listing reads everything. Rows stay. */
export function resetStream(db: StateDb, stream: MirrorStream): Promise<StreamState> {
  return forgetListing(db, stream, 'forget watermark');
}

/** Clears the listing in progress, and the watermark too when asked; a stream without state gets its row. */
async function forgetListing(db: StateDb, stream: MirrorStream, watermark: 'keep watermark' | 'forget watermark'): Promise<StreamState> {
  mirrorTableOf(stream);
  const clearWatermark = watermark === 'forget watermark' ? 'watermark = NULL, ' : '';
  return sqlOf(db).write((tx) =>
    saveState(
      tx,
      stream,
      `INSERT INTO stream_state (stream, updated_at) VALUES (?, ?)
       ON CONFLICT (stream) DO UPDATE SET ${clearWatermark}cursor = NULL, listing_started_at = NULL,
         listing_max_updated_at = NULL, listing_rows = 0, updated_at = excluded.updated_at`,
      [stream, tx.now],
    ),
  );
}

/** The stream's state, or undefined before its first page. */
export async function streamState(db: StateDb, stream: MirrorStream): Promise<StreamState | undefined> {
  return stateOf(sqlOf(db), stream);
}

/** Every stream's state, by name. */
export async function listStreamStates(db: StateDb): Promise<StreamState[]> {
  return sqlOf(db).all<StreamState>('SELECT * FROM stream_state ORDER BY stream');
}

async function stateOf(q: Queryable, stream: MirrorStream): Promise<StreamState | undefined> {
  return q.get<StreamState>('SELECT * FROM stream_state WHERE stream = ?', [stream]);
}

/** Runs an upsert of stream_state and returns the row. */
async function saveState(tx: Queryable, stream: MirrorStream, upsertSql: string, params: SqlParams): Promise<StreamState> {
  await tx.run(upsertSql, params);
  const state = await stateOf(tx, stream);
  if (!state) throw new StoreError('UNKNOWN_STREAM', `stream_state row of ${stream} vanished`);
  return state;
}

/**
 * The later of two timestamps, compared as instants: ISO text does not sort ("10:00:00Z" > "10:00:00.5Z"). The
 * winner keeps the server's own text. Unparsable values never win.
 */
/** `maxUpdatedAt`, or the listing's start less LISTING_START_MARGIN_MS when that is earlier. */
function notPastListingStart(maxUpdatedAt: string, listingStartedAt: string | null): string {
  const start = listingStartedAt === null ? Number.NaN : instantOf(listingStartedAt);
  if (Number.isNaN(start)) return maxUpdatedAt;
  const bound = start - LISTING_START_MARGIN_MS;
  return instantOf(maxUpdatedAt) > bound ? new Date(bound).toISOString() : maxUpdatedAt;
}

function later(current: string | null, candidate: string | null): string | null {
  if (candidate === null || Number.isNaN(instantOf(candidate))) return current;
  if (current === null) return candidate;
  const a = instantOf(current);
  const b = instantOf(candidate);
  return b > a || (b === a && candidate > current) ? candidate : current;
}

/** A mirrored record and when the agent stored it. */
export interface MirroredRecord {
  readonly id: string;
  readonly record: string;
  readonly synced_at: string;
}

/** The mirror table of an entity the delta push compares with (products, product_store), or null. */
const DELTA_MIRRORS: Readonly<Record<string, string>> = { products: 'mirror_products', product_store: 'mirror_product_store' };

/**
 * Mirrored records of `entity` stored after `since` (exclusive; null: every one), oldest first, a page at a time
 * after (`afterSyncedAt`, `afterId`). For delta push: what the platform holds now, to compare with what was sent.
 */
export async function mirroredSince(
  db: StateDb,
  entity: string,
  since: string | null,
  after: { syncedAt: string; id: string } | null,
  limit: number,
): Promise<MirroredRecord[]> {
  const table = DELTA_MIRRORS[entity];
  if (table === undefined) return [];
  const from = after ?? { syncedAt: since ?? '', id: '' };
  return sqlOf(db).all<MirroredRecord>(
    `SELECT id, record, synced_at FROM ${table} WHERE synced_at >= ? AND (synced_at > ? OR id > ?) AND synced_at > ?
     ORDER BY synced_at, id LIMIT ?`,
    [from.syncedAt, from.syncedAt, from.id, since ?? '', limit],
  );
}
