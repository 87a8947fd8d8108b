/**
 * The approval queue's export state. Ids are 1, 2, 3, ... in approval order, so "newest first" is "highest id
 * first" and row `id` lives at index id - 1.
 *
 * export_status moves pending -> exported_api (returned by a destructive GET or by a delivery) -> acknowledged
 * (the spec does not name this value; "acknowledged" is our choice). Cancellation sets cancelled_at; amendment
 * makes a new version (predecessor_id, amendment_reason) and the old one superseded. Neither changes export_status.
 *
 * Sets used by the endpoints:
 * - pending set (GET, history=false): export_status pending, not cancelled, not superseded;
 * - deliverable set (deliveries): not acknowledged, not cancelled, not superseded (a delivered but unacknowledged
 *   row is delivered again from a fresh cursor: at-least-once);
 * - history (history=true): every version, read-only.
 */
import type { AckConflictReason, ApprovedPriceFilters } from '../api/schemas/index.ts';
import type { ApprovalFactory} from './approval-factory.ts';
import { type Approval, type ApprovalShape } from './approval-factory.ts';
import { isoTime } from './http-io.ts';

export type ApprovalFilterValues = Omit<ApprovedPriceFilters, 'history'>;

export interface ApprovalPage {
  readonly rows: Approval[];
  /** Keyset position for the next page (the last id returned), or null when nothing more matches. */
  readonly next: number | null;
}

export interface ApprovalCounts {
  total: number;
  /** Current versions still pending export. */
  pending: number;
  exported_api: number;
  acknowledged: number;
  cancelled: number;
  /** Versions replaced by an amendment (and not cancelled). */
  superseded: number;
}

export type AckOutcome =
  /** `changed`: ids acknowledged now; `repeated`: ids acknowledged before (only when repeats are accepted). */
  | { readonly ok: true; readonly changed: number[]; readonly repeated: number[] }
  | { readonly ok: false; readonly conflicts: { id: number; reason: AckConflictReason }[] };

const isPending = (a: Approval): boolean => a.export_status === 'pending' && a.cancelled_at === null && a.supersededBy === null;
const isDeliverable = (a: Approval): boolean =>
  a.export_status !== 'acknowledged' && a.cancelled_at === null && a.supersededBy === null;
/** Exactly-once deliveries: a delivered row is omitted from later deliveries, as from later history=false reads. */
const isUndelivered = (a: Approval): boolean => isPending(a);

function matcher(f: ApprovalFilterValues): (a: Approval) => boolean {
  const approvedAfter = f.approved_after === undefined ? null : Date.parse(f.approved_after);
  const approvedBefore = f.approved_before === undefined ? null : Date.parse(f.approved_before);
  return (a) =>
    (f.grid_id === undefined || a.grid_id === f.grid_id.toLowerCase()) &&
    (f.store_id === undefined || a.store_id === f.store_id.toLowerCase()) &&
    (f.item_id === undefined || a.item_id === f.item_id) &&
    (f.sku === undefined || a.sku === f.sku) &&
    (approvedAfter === null || a.approvedAtMs >= approvedAfter) &&
    (approvedBefore === null || a.approvedAtMs <= approvedBefore) &&
    (f.effective_after === undefined || (a.effective_date !== null && a.effective_date >= f.effective_after)) &&
    (f.effective_before === undefined || (a.effective_date !== null && a.effective_date <= f.effective_before));
}

export class ApprovalBook {
  readonly #rows: Approval[] = [];
  readonly #factory: ApprovalFactory;

  constructor(factory: ApprovalFactory) {
    this.#factory = factory;
  }

  get(id: number): Approval | undefined {
    return Number.isSafeInteger(id) && id >= 1 ? this.#rows[id - 1] : undefined;
  }

  all(): readonly Approval[] {
    return this.#rows;
  }

  /** Adds `count` new pending approvals approved at `approvedAtMs + i * stepMs`. */
  add(count: number, approvedAtMs: number, stepMs: number, shape: ApprovalShape): Approval[] {
    const added: Approval[] = [];
    for (let i = 0; i < count; i += 1) {
      const row = this.#factory.make(this.#rows.length + 1, approvedAtMs + i * stepMs, shape, i);
      this.#rows.push(row);
      added.push(row);
    }
    return added;
  }

  /** A new version of a current approval; an error message when `id` is unknown, cancelled or superseded. */
  amend(id: number, nowMs: number, price?: string, reason?: string): Approval | string {
    const base = this.get(id);
    if (!base) return `approval ${id} does not exist`;
    if (base.cancelled_at !== null) return `approval ${id} is cancelled`;
    if (base.supersededBy !== null) return `approval ${id} is already superseded by ${base.supersededBy}`;
    const next = this.#factory.amend(base, this.#rows.length + 1, nowMs, price, reason);
    this.#rows.push(next);
    base.supersededBy = next.id;
    return next;
  }

  cancel(id: number, nowMs: number): Approval | string {
    const row = this.get(id);
    if (!row) return `approval ${id} does not exist`;
    if (row.cancelled_at !== null) return `approval ${id} is already cancelled`;
    row.cancelled_at = isoTime(nowMs);
    return row;
  }

  /** GET /v1/approved_prices: newest first. The caller moves the returned rows on with markExported (history=false). */
  list(history: boolean, filters: ApprovalFilterValues, beforeId: number | null, limit: number): ApprovalPage {
    const match = matcher(filters);
    const start = Math.min(this.#rows.length, beforeId === null ? this.#rows.length : beforeId - 1);
    return this.#page(start - 1, -1, (row) => (history || isPending(row)) && match(row), limit);
  }

  /**
   * POST /v1/approved_prices/deliveries: ascending ids after the cursor. The caller marks rows exported. With
   * `exactlyOnce`, rows delivered before (exported_api) are not delivered again.
   */
  deliver(history: boolean, filters: ApprovalFilterValues, afterId: number | null, limit: number, exactlyOnce = false): ApprovalPage {
    const match = matcher(filters);
    const deliverable = exactlyOnce ? isUndelivered : isDeliverable;
    return this.#page(Math.max(0, afterId ?? 0), 1, (row) => (history || deliverable(row)) && match(row), limit);
  }

  /**
   * Up to `limit` rows that `keep` accepts, walking the rows from index `from` one `step` at a time; `next` is the
   * last row's id when a further row was accepted (the page is full and more follow), else null.
   */
  #page(from: number, step: 1 | -1, keep: (row: Approval) => boolean, limit: number): ApprovalPage {
    const rows: Approval[] = [];
    let next: number | null = null;
    for (let i = from; i >= 0 && i < this.#rows.length; i += step) {
      const row = this.#rows[i]!;
      if (!keep(row)) continue;
      if (rows.length === limit) {
        next = rows[rows.length - 1]!.id;
        break;
      }
      rows.push(row);
    }
    return { rows, next };
  }

  /**
   * Moves rows that were returned by a destructive read or a delivery from pending to exported_api. Called after the
   * page is serialized: a page shows each row as it was selected (pending on its first delivery, exported_api when
   * it is delivered again), and the move is visible from then on.
   */
  markExported(rows: readonly Approval[], nowMs: number): void {
    for (const row of rows) {
      if (row.export_status !== 'pending') continue;
      row.export_status = 'exported_api';
      row.exported_at = isoTime(nowMs);
    }
  }

  /**
   * All or nothing: any conflicting id refuses the whole batch. Reason precedence for an id: unknown,
   * already_acknowledged, cancelled, superseded (an acknowledged row amended later is reported as acknowledged:
   * that is what tells an agent its earlier acknowledgement went through). With `acceptRepeats`, an id acknowledged
   * before is no conflict: the batch is accepted and that id stays as it was.
   */
  acknowledge(ids: readonly number[], acceptRepeats = false): AckOutcome {
    const unique = [...new Set(ids)];
    const conflicts: { id: number; reason: AckConflictReason }[] = [];
    for (const id of unique) {
      const row = this.get(id);
      const reason: AckConflictReason | null = !row
        ? 'unknown'
        : row.export_status === 'acknowledged'
          ? acceptRepeats
            ? null
            : 'already_acknowledged'
          : row.cancelled_at !== null
            ? 'cancelled'
            : row.supersededBy !== null
              ? 'superseded'
              : null;
      if (reason !== null) conflicts.push({ id, reason });
    }
    if (conflicts.length > 0) {
      for (const { id, reason } of conflicts) if (reason === 'already_acknowledged') this.get(id)!.conflictingAcks += 1;
      return { ok: false, conflicts };
    }
    const changed: number[] = [];
    const repeated: number[] = [];
    for (const id of unique) {
      const row = this.get(id)!;
      if (row.export_status === 'acknowledged') {
        row.repeatAcks += 1;
        repeated.push(id);
        continue;
      }
      row.export_status = 'acknowledged';
      row.ackCount += 1;
      changed.push(id);
    }
    return { ok: true, changed, repeated };
  }

  counts(): ApprovalCounts {
    const counts = { total: this.#rows.length, pending: 0, exported_api: 0, acknowledged: 0, cancelled: 0, superseded: 0 };
    for (const row of this.#rows) {
      if (row.cancelled_at !== null) counts.cancelled += 1;
      else if (row.supersededBy !== null) counts.superseded += 1;
      else counts[row.export_status] += 1;
    }
    return counts;
  }
}

/** The wire form. Deliveries add delivery_channel; both carry predecessor_id and amendment_reason. */
export function approvalJson(a: Approval, delivery: boolean): Record<string, unknown> {
  const { approvedAtMs: _at, supersededBy: _by, ackCount: _acks, conflictingAcks: _conflicts, repeatAcks: _repeats, ...wire } = a;
  return delivery ? { ...wire, delivery_channel: 'client_api' } : wire;
}
