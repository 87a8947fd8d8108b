/**
 * Files the brakes held, for people and programs: `status` (text and --json) and the web console call
 * `heldFileList`. Reads only; the files' rows belong to src/store/delta-state.ts.
 */
import { releaseCommand, type HeldPreview } from '../ingest/delta/delta-plan.ts';
import { openInboxFile } from '../ingest/inbox-file.ts';
import { heldFiles } from '../store/delta-state.ts';
import { hasTable } from '../store/meta.ts';
import type { StateDb } from '../store/state-db.ts';

export interface HeldFileView {
  id: number;
  source: string;
  entity: string;
  name: string;
  /** Where the file waits: held/ in its inbox. */
  held_path: string;
  /** Its preview: counts by kind, the largest price moves, the first missing keys. */
  preview_path: string;
  held_at: string;
  /** Why, one sentence per brake. */
  brakes: string[];
  /** What a person types to send it after all. */
  release_command: string;
}


/** Held files not released, oldest first; empty for a database from before delta push. */
export async function heldFileList(db: StateDb): Promise<HeldFileView[]> {
  if (!(await hasTable(db, 'delta_files'))) return [];
  return (await heldFiles(db)).map((row) => {
    const brakes = row.brakes === null ? [] : (JSON.parse(row.brakes) as { message: string }[]).map((b) => b.message);
    return {
      id: row.file_id,
      source: row.source,
      entity: row.entity,
      name: row.name,
      held_path: row.held_path,
      preview_path: `${row.held_path}.preview.json`,
      held_at: row.held_at,
      brakes,
      release_command: releaseCommand(row.file_id),
    };
  });
}

/** A file still held, for its page: why, what it would have done (its preview), and what sends it after all. */
export interface HeldDetail {
  readonly release_command: string;
  /** `<name>.preview.json`; null when it cannot be read (removed by hand). */
  readonly preview: HeldPreview | null;
}

/** The preview is the agent's own JSON, a few kilobytes: a larger file there is not one. */
const PREVIEW_MAX_BYTES = 1024 * 1024;

/** The held detail of file `id`, or null when it is not held (never was, or released). */
export async function heldDetail(db: StateDb, id: number): Promise<HeldDetail | null> {
  const held = (await heldFileList(db)).find((f) => f.id === id);
  if (held === undefined) return null;
  return { release_command: held.release_command, preview: await readPreview(held.preview_path) };
}

/**
 * The preview as the agent wrote it, or null: missing, not a plain file (opened without following a link), larger
 * than PREVIEW_MAX_BYTES (never read whole), not JSON, or not of the preview's shape (the page would fail on it).
 */
async function readPreview(path: string): Promise<HeldPreview | null> {
  try {
    const handle = await openInboxFile(path);
    try {
      if ((await handle.stat()).size > PREVIEW_MAX_BYTES) return null;
      const value = JSON.parse(await handle.readFile('utf8')) as Partial<HeldPreview> | null;
      const shaped =
        typeof value?.rows === 'object' && value.rows !== null && [value.brakes, value.largest_price_moves, value.first_missing_keys].every(Array.isArray);
      return shaped ? (value as HeldPreview) : null;
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
}

/** Held files per source (the pricing_agent_held_files gauge). */
export async function heldCounts(db: StateDb): Promise<{ source: string; count: number }[]> {
  const counts = new Map<string, number>();
  for (const file of await heldFileList(db)) counts.set(file.source, (counts.get(file.source) ?? 0) + 1);
  return [...counts].map(([source, count]) => ({ source, count }));
}
