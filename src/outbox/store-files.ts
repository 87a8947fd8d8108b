/**
 * Per-store export files: `DIR/<store folder>/prices-<from_seq>-<to_seq>.csv|.jsonl` with the feed rows of one
 * store, seq from_seq..to_seq inclusive. Product-level rows (store_id NULL) go to the folder `_all`. Seqs in names
 * are zero-padded to 12 digits, so sorting names sorts files by seq (a POS must apply them in that order).
 *
 * What survives a crash, per file: (1) the range (last_seq, pending_to_seq] is committed as pending, (2) the file is
 * written to a temporary name, fsynced, renamed, the folder fsynced, (3) last_seq = pending_to_seq is committed.
 * Dying before (3) leaves the range pending: the next run writes the same range under the same name with the same
 * content (the feed never changes). Two processes exporting at once (the daemon and a one-shot `pull` or `outbox
 * export`) choose each range once (beginExportRange) and may both write the pending one, under its one name. So a
 * file may, rarely, be delivered twice, identical, but a row never appears in two different files and is never left
 * out.
 * The checkpoint (last_seq) moves only after the file it stands for is durable.
 */
import { join } from 'node:path';
import { StoreError } from '../store/errors.ts';
import {
  beginExportRange,
  completeExportRange,
  exportChunkEnd,
  exportScanSeq,
  exportState,
  recordExportScan,
  storeFeedRange,
  storeFeedRows,
  storesToExport,
} from '../store/outbox-exports.ts';
import { PRODUCT_LEVEL_STORE_KEY } from '../store/schema.ts';
import { maxSeq } from '../store/price-feed.ts';
import type { StateDb } from '../store/state-db.ts';
import { ensureDirectory, writeFileAtomic } from '../atomic-file.ts';
import { feedHeader, type FeedRowFormat, formatFeedRows } from './feed-format.ts';

/** The two formats (columns and quoting: feed-format.ts). */
export const EXPORT_FORMATS = ['csv', 'jsonl'] as const satisfies readonly FeedRowFormat[];
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface ExportOptions {
  format: ExportFormat;
  /** A store's new rows are split into files of at most this many rows. */
  maxRowsPerFile?: number;
  /** Permission bits of the files, before the umask. */
  fileMode?: number;
}

export interface ExportedFile {
  /** store_id, or `_all` for product-level rows. */
  store_key: string;
  path: string;
  from_seq: number;
  to_seq: number;
  rows: number;
}

const DEFAULTS = { maxRowsPerFile: 50_000, fileMode: 0o640 };
const READ_BATCH = 5000;
const SAFE_FOLDER = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** `prices-000000000015-000000000230.csv` */
export function exportFileName(fromSeq: number, toSeq: number, format: ExportFormat): string {
  return `prices-${String(fromSeq).padStart(12, '0')}-${String(toSeq).padStart(12, '0')}.${format}`;
}

/**
 * The folder of a store: the store id itself when it is a safe file name (UUIDs are), else `_id-` and its UTF-8
 * bytes in hex (no path tricks; ids that are safe never start with `_`, so neither form can collide with `_all`).
 */
export function storeFolderName(storeKey: string): string {
  if (storeKey === PRODUCT_LEVEL_STORE_KEY || SAFE_FOLDER.test(storeKey)) return storeKey;
  return `_id-${Buffer.from(storeKey, 'utf8').toString('hex')}`;
}

const running = new WeakMap<StateDb, Promise<unknown>>();

/**
 * Writes files for the feed rows not yet exported, per store, and returns them in the order written. Calls on the
 * same database are queued, never run side by side.
 */
export async function exportStoreFiles(db: StateDb, dir: string, options: ExportOptions): Promise<ExportedFile[]> {
  if (!EXPORT_FORMATS.includes(options.format)) {
    throw new StoreError('INVALID_ARGUMENT', `format must be csv or jsonl, got ${String(options.format)}`);
  }
  const maxRows = options.maxRowsPerFile ?? DEFAULTS.maxRowsPerFile;
  if (!Number.isInteger(maxRows) || maxRows < 1) {
    throw new StoreError('INVALID_ARGUMENT', `maxRowsPerFile must be >= 1, got ${maxRows}`);
  }
  const settings = { format: options.format, maxRowsPerFile: maxRows, fileMode: options.fileMode ?? DEFAULTS.fileMode };
  const previous = running.get(db) ?? Promise.resolve();
  const run = previous.catch(() => undefined).then(() => exportAll(db, dir, settings));
  running.set(db, run);
  return await run;
}

async function exportAll(db: StateDb, dir: string, options: Required<ExportOptions>): Promise<ExportedFile[]> {
  const upTo = await maxSeq(db);
  const keys = await storesToExport(db, await exportScanSeq(db), upTo);
  const files: ExportedFile[] = [];
  for (const key of [...keys].sort()) {
    for (;;) {
      const file = await exportNextFile(db, dir, key, upTo, options);
      if (!file) break;
      files.push(file);
    }
  }
  // Every store's rows up to `upTo` are now in files: the next run need not look below it.
  await recordExportScan(db, upTo);
  return files;
}

/** Writes the next file of one store (its pending range first); undefined when the store is up to date. */
async function exportNextFile(
  db: StateDb,
  dir: string,
  key: string,
  upTo: number,
  options: Required<ExportOptions>,
): Promise<ExportedFile | undefined> {
  for (;;) {
    const state = await exportState(db, key);
    const after = state?.last_seq ?? 0;
    let to = state?.pending_to_seq ?? null;
    if (to === null) {
      to = await exportChunkEnd(db, key, after, upTo, options.maxRowsPerFile);
      if (to === null) return undefined;
      // Another process chose the store's next range first: read the state again (its range, or its checkpoint).
      if (!(await beginExportRange(db, key, after, to))) continue;
    }
    const range = await storeFeedRange(db, key, after, to);
    let file: ExportedFile | undefined;
    if (range.fromSeq !== null) {
      const folder = join(dir, storeFolderName(key));
      const path = join(folder, exportFileName(range.fromSeq, to, options.format));
      await ensureDirectory(folder);
      // Written even if a file of that name exists: after a crash its content is the same; anything else is stale.
      await writeFileAtomic(path, fileChunks(db, key, after, to, options.format), options.fileMode);
      file = { store_key: key, path, from_seq: range.fromSeq, to_seq: to, rows: range.rows };
    }
    await completeExportRange(db, key, to, file?.path ?? null);
    if (file) return file;
  }
}

/** The file's text in batches; each batch is read completely before it is written, so no statement stays open. */
async function* fileChunks(db: StateDb, key: string, after: number, to: number, format: ExportFormat): AsyncGenerator<string> {
  yield feedHeader(format);
  for (let last = after; ; ) {
    const rows = await storeFeedRows(db, key, last, to, READ_BATCH);
    if (rows.length === 0) return;
    yield formatFeedRows(format, rows);
    last = rows[rows.length - 1]?.seq ?? to;
  }
}
