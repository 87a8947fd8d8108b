/**
 * Makes approved-price rows from the seeded data stream: each approval points at a real row of a seeded grid
 * (grid_id, grid_item_id, item_id, sku, current price), at one of the seeded stores or, for a share of them, at no
 * store (product-level, store_id null). Prices are computed in integer cents, never in floats.
 */
import { centsToDecimal, type Prng } from './prng.ts';
import type { GridCatalog } from './grids.ts';
import { isoTime } from './http-io.ts';

export type ApprovalExportStatus = 'pending' | 'exported_api' | 'acknowledged';

export interface Approval {
  readonly id: number;
  readonly grid_id: string;
  readonly grid_item_id: number;
  readonly item_id: string | null;
  readonly sku: string | null;
  readonly store_id: string | null;
  readonly current_price: string | null;
  readonly proposed_price: string;
  readonly approved_price: string;
  readonly effective_date: string | null;
  readonly currency_code: string;
  readonly proposal_source: string;
  readonly source: string;
  readonly trace: readonly { source: string; column_key: string; source_job_id: string; payload: Record<string, string> }[];
  readonly approved_at: string;
  readonly approved_by_user_id: string;
  readonly approval_details: Readonly<Record<string, string | number>>;
  export_status: ApprovalExportStatus;
  exported_at: string | null;
  cancelled_at: string | null;
  readonly predecessor_id: number | null;
  readonly amendment_reason: string | null;
  // Internal bookkeeping, never serialized.
  readonly approvedAtMs: number;
  supersededBy: number | null;
  ackCount: number;
  /** Refused batches (409) that held it while it was acknowledged already. */
  conflictingAcks: number;
  /** Accepted batches that held it again while it was acknowledged already (dialects that accept repeats). */
  repeatAcks: number;
}

export interface ApprovalShape {
  /** Stores to spread approvals over (default: every seeded store). */
  readonly stores: readonly string[];
  /** Share of product-level approvals (store_id null). */
  readonly productLevelShare: number;
  /** Share of approvals effective 1..30 days after their approval day. */
  readonly futureShare: number;
  /** Effective dates to use in turn instead of drawing them (null: no effective date). */
  readonly effectiveDates?: readonly (string | null)[];
  readonly gridId?: string;
}

const DAY_MS = 86_400_000;
const SOURCES = ['dp', 'po', 'po_dp'] as const;

const day = (ms: number): string => isoTime(ms).slice(0, 10);
/** Basis points of a ratio, as a decimal string with two places ("12.34" for 12.34 %). */
const percent = (numerator: number, denominator: number): string =>
  centsToDecimal(denominator === 0 ? 0 : Math.round((numerator * 10_000) / denominator));
const cents = (decimal: string): number => {
  const [whole = '0', fraction = '0'] = decimal.split('.');
  const sign = whole.startsWith('-') ? -1 : 1;
  return sign * (Math.abs(Number(whole)) * 100 + Number(fraction.padEnd(2, '0').slice(0, 2)));
};

export class ApprovalFactory {
  readonly #data: Prng;
  readonly #grids: GridCatalog;
  readonly #userId: string;

  constructor(data: Prng, grids: GridCatalog, userId: string) {
    this.#data = data;
    this.#grids = grids;
    this.#userId = userId;
  }

  make(id: number, approvedAtMs: number, shape: ApprovalShape, ordinal: number): Approval {
    const p = this.#data;
    const grid = (shape.gridId === undefined ? undefined : this.#grids.byId(shape.gridId)) ?? p.pick(this.#grids.grids);
    const gridItemId = p.int(1, grid.row_count);
    const row = this.#grids.row(grid, gridItemId).cells;
    const currentCents = cents(row.current_price ?? '1.00');
    const costCents = cents(row.unit_cost ?? '0.50');
    const proposalSource = p.pick(SOURCES);
    const proposed = Math.max(1, Math.round((currentCents * p.int(90, 115)) / 100));
    const overridden = p.chance(0.15);
    const approved = overridden ? this.#nudge(proposed, 5) : proposed;
    const storeId = shape.stores.length === 0 || p.chance(shape.productLevelShare) ? null : p.pick(shape.stores);
    const effective = shape.effectiveDates?.length
      ? (shape.effectiveDates[ordinal % shape.effectiveDates.length] ?? null)
      : this.#effectiveDate(approvedAtMs, shape.futureShare);
    const trace = (proposalSource === 'po_dp' ? ['po', 'dp'] : [proposalSource]).map((source) => ({
      source,
      column_key: `${source}_price`,
      source_job_id: p.uuid(),
      payload: { price: centsToDecimal(proposed), model: source === 'dp' ? 'elasticity-v3' : 'optimizer-v7' },
    }));
    return {
      id,
      grid_id: grid.grid_id,
      grid_item_id: gridItemId,
      item_id: row.item_id ?? null,
      sku: row.sku ?? null,
      store_id: storeId,
      current_price: centsToDecimal(currentCents),
      proposed_price: centsToDecimal(proposed),
      approved_price: centsToDecimal(approved),
      effective_date: effective,
      currency_code: 'EUR',
      proposal_source: proposalSource,
      source: overridden ? 'user_defined' : proposalSource,
      trace,
      approved_at: isoTime(approvedAtMs),
      approved_by_user_id: this.#userId,
      approval_details: {
        run_id: p.uuid(),
        policy_id: p.uuid(),
        policy_revision: p.int(1, 12),
        user_id: this.#userId,
        evaluated_at: isoTime(approvedAtMs - p.int(1, 3600) * 1000),
        minimum_margin_pct: '10.00',
        maximum_change_pct: '15.00',
        margin_pct: percent(approved - costCents, approved),
        change_pct: percent(approved - currentCents, currentCents),
        method: 'automatic',
      },
      export_status: 'pending',
      exported_at: null,
      cancelled_at: null,
      predecessor_id: null,
      amendment_reason: null,
      approvedAtMs,
      supersededBy: null,
      ackCount: 0,
      conflictingAcks: 0,
      repeatAcks: 0,
    };
  }

  /** A new version of `base`: a new id, a new approved price (given, or moved by up to 5 %), pending again. */
  amend(base: Approval, id: number, nowMs: number, price: string | undefined, reason: string | undefined): Approval {
    const baseCents = cents(base.approved_price);
    const approved = price ?? centsToDecimal(this.#nudge(baseCents, 5));
    const current = base.current_price === null ? null : cents(base.current_price);
    return {
      ...base,
      id,
      approved_price: approved,
      source: 'user_defined',
      approved_at: isoTime(nowMs),
      approval_details: {
        ...base.approval_details,
        evaluated_at: isoTime(nowMs),
        change_pct: current === null ? '0.00' : percent(cents(approved) - current, current),
      },
      export_status: 'pending',
      exported_at: null,
      cancelled_at: null,
      predecessor_id: base.id,
      amendment_reason: reason ?? 'Price corrected after review',
      approvedAtMs: nowMs,
      supersededBy: null,
      ackCount: 0,
      conflictingAcks: 0,
      repeatAcks: 0,
    };
  }

  /** A positive price that differs from `value` by 1..maxPct percent (at least one cent), either way. */
  #nudge(value: number, maxPct: number): number {
    const p = this.#data;
    const delta = Math.max(1, Math.round((value * p.int(1, maxPct)) / 100));
    const down = value - delta;
    return p.chance(0.5) && down >= 1 ? down : value + delta;
  }

  #effectiveDate(approvedAtMs: number, futureShare: number): string | null {
    const p = this.#data;
    if (p.chance(futureShare)) return day(approvedAtMs + p.int(1, 30) * DAY_MS);
    if (p.chance(0.1)) return null;
    return day(approvedAtMs - p.int(0, 3) * DAY_MS);
  }
}
