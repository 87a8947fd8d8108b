/**
 * The chaos run's script: every event with its moment (ms after the start), planned up front from the seed.
 * Which approval an amend or a cancel picks is decided when it runs (from the same seeded stream, in event order),
 * so the same seed gives the same sequence of control-plane changes.
 */
import { buildFile, CHAOS_ENTITIES, type ChaosFile } from './files.ts';
import type { Prng } from '../../src/sandbox/prng.ts';

export type DropMethod = 'direct' | 'rename' | 'marker';

export type ChaosEvent =
  | { at: number; kind: 'drop'; file: ChaosFile; method: DropMethod }
  | { at: number; kind: 'redrop'; file: ChaosFile }
  | { at: number; kind: 'kill' }
  | { at: number; kind: 'approvals'; count: number }
  | { at: number; kind: 'amend' }
  | { at: number; kind: 'cancel' }
  | { at: number; kind: 'burst'; on: boolean }
  | { at: number; kind: 'rotate' };

export interface TimelineOptions {
  readonly durationMs: number;
  readonly kills: number;
  readonly files: number;
  /** Average rows per file. */
  readonly rows: number;
  readonly stores: readonly string[];
}

/** Kill moments: uniform over the run, kept apart by a short gap when there is room for it. */
function killMoments(rng: Prng, count: number, durationMs: number): number[] {
  const from = durationMs * 0.05;
  const to = durationMs * 0.95;
  const gap = Math.min(1_500, (to - from) / (count + 1) / 2);
  const out: number[] = [];
  for (let tries = 0; out.length < count && tries < count * 200; tries += 1) {
    const at = from + rng.float() * (to - from);
    if (out.every((t) => Math.abs(t - at) >= gap)) out.push(at);
  }
  while (out.length < count) out.push(from + ((to - from) * out.length) / count); // crowded: evenly
  return out.sort((a, b) => a - b);
}

export function planTimeline(rng: Prng, o: TimelineOptions): ChaosEvent[] {
  const events: ChaosEvent[] = [];
  const d = o.durationMs;
  for (let i = 0; i < o.files; i += 1) {
    const entity = CHAOS_ENTITIES[i % CHAOS_ENTITIES.length] ?? 'transactions';
    const rows = rng.int(Math.max(1, Math.round(o.rows / 2)), Math.round(o.rows * 1.5));
    const badShare = rng.chance(0.5) ? 0.05 : 0;
    const file = buildFile(entity, i + 1, rows, badShare, o.stores, rng);
    const at = rng.float() * d * 0.85;
    const method = rng.pick<DropMethod>(['direct', 'direct', 'rename', 'marker']);
    events.push({ at, kind: 'drop', file, method });
    // Some files come again, byte for byte, under the same name (an ERP re-sending yesterday's export).
    if (rng.chance(0.15) || i === 1) events.push({ at: Math.min(d * 0.9, at + 2_000 + rng.float() * 8_000), kind: 'redrop', file });
  }
  for (const at of killMoments(rng, o.kills, d)) events.push({ at, kind: 'kill' });
  // Approval changes every 5 s and a 429 burst every 15 s (at least 12 and 4): a long run keeps the pull as busy.
  const beats = Math.max(12, Math.round(d / 5_000));
  for (let b = 0; b < beats; b += 1) {
    const at = (d * (b + 0.5)) / beats;
    events.push({ at, kind: 'approvals', count: rng.int(3, 12) });
    events.push({ at: at + rng.float() * (d / beats / 2), kind: 'amend' });
    if (rng.chance(0.7)) events.push({ at: at + rng.float() * (d / beats / 2), kind: 'cancel' });
  }
  const bursts = Math.max(4, Math.round(d / 15_000));
  for (let b = 0; b < bursts; b += 1) {
    const at = (d * (b + 0.3)) / bursts;
    events.push({ at, kind: 'burst', on: true }, { at: at + 2_500, kind: 'burst', on: false });
  }
  events.push({ at: d * 0.45, kind: 'rotate' });
  return events.sort((a, b) => a.at - b.at);
}
