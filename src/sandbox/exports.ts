/**
 * Transaction exports. The spec shows only the cancel operation; exports are seeded (one per state, plus a second
 * queued and running one) and tests can add more through the control plane.
 *
 * Cancel transitions (our choice, docs/sandbox.md): queued -> cancelled at once; running -> cancelling, and
 * cancelled one job-pace tick later (through the injected clock; at once in instant mode); cancelling stays
 * cancelling until then; completed, failed, cancelled and expired are returned unchanged with 200.
 * The answer is exactly the ExportStatus object (no additional properties).
 */
import type { ExportStatus } from '../api/schemas/index.ts';
import { EXPORT_STATUSES } from '../api/schemas/index.ts';
import type { Clock } from '../clock.ts';
import { isoTime } from './http-io.ts';
import type { JobPace } from './jobs.ts';
import type { Prng } from './prng.ts';

export type ExportState = (typeof EXPORT_STATUSES)[number];

const DAY_MS = 86_400_000;
/** Lifetime of an export before it expires (not shown in the spec). */
export const EXPORT_LIFETIME_MS = 7 * DAY_MS;

const SEEDED: readonly ExportState[] = [...EXPORT_STATUSES, 'queued', 'running'];

export class ExportBook {
  readonly #exports = new Map<string, ExportStatus>();
  readonly #data: Prng;
  readonly #clock: Clock;
  readonly #pace: JobPace;
  readonly #signal: AbortSignal;

  constructor(data: Prng, clock: Clock, pace: JobPace, signal: AbortSignal, epoch: number) {
    this.#data = data;
    this.#clock = clock;
    this.#pace = pace;
    this.#signal = signal;
    for (const status of SEEDED) this.add(status, epoch);
  }

  add(status: ExportState, nowMs: number): ExportStatus {
    const p = this.#data;
    const total = status === 'queued' ? null : p.int(1000, 500_000);
    const written = total === null ? 0 : status === 'completed' ? total : p.int(0, total);
    const record: ExportStatus = {
      export_id: p.uuid(),
      job_id: p.uuid(),
      status,
      rows_written: written,
      total_rows: total,
      expires_at: isoTime(status === 'expired' ? nowMs - DAY_MS : nowMs + EXPORT_LIFETIME_MS),
      error: status === 'failed' ? 'export query timed out' : null,
    };
    this.#exports.set(record.export_id, record);
    return record;
  }

  get(id: string): ExportStatus | undefined {
    return this.#exports.get(id.toLowerCase());
  }

  all(): ExportStatus[] {
    return [...this.#exports.values()].map((e) => ({ ...e }));
  }

  /** Applies a cancel request; returns a copy of the status after it. */
  cancel(record: ExportStatus): ExportStatus {
    if (record.status === 'queued') record.status = 'cancelled';
    else if (record.status === 'running') {
      record.status = 'cancelling';
      void this.#finishCancel(record);
    }
    return { ...record };
  }

  async #finishCancel(record: ExportStatus): Promise<void> {
    try {
      if (this.#pace === 'instant') await new Promise<void>((resolve) => setImmediate(resolve));
      else await this.#clock.sleep(this.#pace.tickMs, this.#signal);
    } catch {
      return; // the sandbox was reset or closed
    }
    if (record.status === 'cancelling') record.status = 'cancelled';
  }
}
