/**
 * A file the brakes stopped: moved to `<inbox>/held/` with `<name>.preview.json` next to it (what the file would have
 * done: counts by kind, the largest price moves with their keys, the first missing keys, the brakes and their
 * figures, how to release it). Nothing of it was sent. `pricing-agent files release NAME` sends it
 * (src/ingest/operations/release.ts).
 *
 * In the ledger a held file is closed like a failed one (status `failed`, error code HELD, final_path in held/):
 * it left processing/ and waits for a person; its delta record (delta_files.held_at) says it is held.
 */
import { join } from 'node:path';
import { BUSINESS_KEY_FIELDS, type Entity } from '../../api/schemas/index.ts';
import { writeFileAtomic } from '../../atomic-file.ts';
import { saveDeltaFile, type DeltaFileRecord } from '../../store/delta-state.ts';
import type { PushFile } from '../../store/push-ledger.ts';
import { freeName, ownFolder } from '../folders.ts';
import type { RowReader } from '../read/index.ts';
import type { DeltaPlan } from './delta-plan.ts';
import type { StateDb } from '../../store/state-db.ts';

export function heldDir(inbox: string): string {
  return join(inbox, 'held');
}

export function previewPathOf(heldPath: string): string {
  return `${heldPath}.preview.json`;
}

/** `<name>.preview.json`. */
export interface HeldPreview {
  file: string;
  source: string;
  entity: string;
  held_at: string;
  /** Why: one entry per brake the file trips. */
  brakes: { brake: string; limit: number; value: number | null; message: string }[];
  rows: {
    compared: number;
    known_keys: number;
    unchanged: number;
    changed: number;
    new: number;
    changed_on_platform: number;
    remapped: number;
    /** Rows of keys the file holds more than once (sent, the later row winning). */
    repeated: number;
    missing: number;
  };
  largest_price_moves: { line: number; key: Record<string, string> | null; before: string; after: string; move_pct: number | null }[];
  first_missing_keys: { key: Record<string, string> | null; id: string | number | null }[];
  release: string;
}

type Row = Readonly<Record<string, unknown>>;

/** The key fields of the given lines, from one more pass over the file (at most a few dozen lines). */
async function keysOfLines(entity: Entity, reader: RowReader<Row>, lines: ReadonlySet<number>): Promise<Map<number, Record<string, string>>> {
  const found = new Map<number, Record<string, string>>();
  if (lines.size === 0) return found;
  for await (const outcome of reader) {
    if (outcome.kind !== 'row' || !lines.has(outcome.line)) continue;
    const record = outcome.record;
    found.set(outcome.line, Object.fromEntries(BUSINESS_KEY_FIELDS[entity].map((f) => [f, typeof record[f] === 'string' ? record[f] : ''])));
    if (found.size === lines.size) break;
  }
  return found;
}

function keyRecord(entity: Entity, key: readonly string[] | null): Record<string, string> | null {
  if (key === null) return null;
  return Object.fromEntries(BUSINESS_KEY_FIELDS[entity].map((f, i) => [f, key[i] ?? '']));
}

export interface HeldFile {
  readonly heldPath: string;
  readonly previewPath: string;
  readonly preview: HeldPreview;
}

/**
 * Writes the preview and returns where the file goes; the caller moves the file and closes its ledger row
 * (push-file.ts). `reopen` reads the file once more for the keys of the largest price moves.
 */
export async function writeHeldPreview(
  db: StateDb,
  file: PushFile,
  plan: DeltaPlan,
  heldAt: Date,
  reopen: () => Promise<RowReader<Row>>,
): Promise<HeldFile> {
  const entity = file.entity as Entity;
  const dir = heldDir(file.inbox);
  await ownFolder(file.inbox, dir);
  const heldPath = await freeName(dir, file.original_name, file.id);
  const moves = plan.comparison.priceMoves;
  const reader = await reopen();
  let keys: Map<number, Record<string, string>>;
  try {
    keys = await keysOfLines(entity, reader, new Set(moves.map((m) => m.line)));
  } finally {
    reader.close();
  }
  const c = plan.comparison.counts;
  const preview: HeldPreview = {
    file: file.original_name,
    source: file.source,
    entity: file.entity,
    held_at: heldAt.toISOString(),
    brakes: plan.tripped.map((t) => ({ brake: t.brake, limit: t.limit, value: Number.isFinite(t.value) ? t.value : null, message: t.message })),
    rows: {
      compared: c.rows,
      known_keys: c.known,
      unchanged: c.unchanged,
      changed: c.changed,
      new: c.newKeys,
      changed_on_platform: c.platformChanged,
      remapped: c.remapped,
      repeated: c.repeated,
      missing: c.missing,
    },
    largest_price_moves: moves.map((m) => ({
      line: m.line,
      key: keys.get(m.line) ?? null,
      before: m.before,
      after: m.after,
      move_pct: Number.isFinite(m.pct) ? Math.round(m.pct * 10) / 10 : null,
    })),
    first_missing_keys: plan.comparison.firstMissing.map((k) => ({
      key: keyRecord(entity, k.key),
      id: k.platformId,
    })),
    release: releaseCommand(file.id),
  };
  const previewPath = previewPathOf(heldPath);
  await writeFileAtomic(previewPath, [`${JSON.stringify(preview, null, 2)}\n`]);
  return { heldPath, previewPath, preview };
}

/** Marks the file held in its delta record (after it was moved to held/). */
export async function recordHeld(db: StateDb, record: DeltaFileRecord, heldPath: string, heldAt: string): Promise<void> {
  await saveDeltaFile(db, { ...record, held_at: heldAt, held_path: heldPath });
}

/**
 * What a person types to send a held file after all: by its id, which a shell takes as it is (a name may hold `$`,
 * a backtick or `!`, which a shell would expand in a pasted command) and which needs no `--source`.
 */
export function releaseCommand(fileId: number): string {
  return `pricing-agent files release ${fileId}`;
}
