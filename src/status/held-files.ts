/**
 * Files the brakes held, for people and programs: `status` (text and --json) and the web console call
 * `heldFileList`. Reads only; the files' rows belong to src/store/delta-state.ts.
 */
import { basename } from 'node:path';
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
      release_command: `pricing-agent files release ${JSON.stringify(basename(row.held_path))} --source ${row.source}`,
    };
  });
}

/** Held files per source (the pricing_agent_held_files gauge). */
export async function heldCounts(db: StateDb): Promise<{ source: string; count: number }[]> {
  const counts = new Map<string, number>();
  for (const file of await heldFileList(db)) counts.set(file.source, (counts.get(file.source) ?? 0) + 1);
  return [...counts].map(([source, count]) => ({ source, count }));
}
