/**
 * The control handle: what tests and demos use to steer the sandbox and read its state. The HTTP control plane
 * (/_sandbox/*, control-routes.ts) calls exactly these methods, with the same snake_case option objects, so a test
 * in-process and a shell script with curl see the same behaviour.
 *
 * Methods throw ControlError (with the HTTP status the control plane answers) for an unknown id or an invalid
 * state change; option objects are validated with zod (a ZodError becomes a 422 on the control plane).
 */
import { z } from 'zod';
import { EXPORT_STATUSES, isoDate, type ExportStatus } from '../api/schemas/index.ts';
import { approvalJson } from './approval-book.ts';
import type { ExportState } from './exports.ts';
import { FaultConfig, type FaultInput } from './faults.ts';
import { RateLimitConfig, type RateLimitInput } from './rate-limit.ts';
import { snapshot, type SandboxState } from './state.ts';
import { DEFAULT_SHAPE, World, type WorldOptions } from './world.ts';

export class ControlError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = 'ControlError';
    this.status = status;
  }
}

export const InjectApprovals = z.strictObject({
  count: z.number().int().min(1).max(100_000).default(10),
  /** Stores to spread the approvals over; every one must be a seeded store. Default: all seeded stores. */
  stores: z.array(z.string()).optional(),
  product_level_share: z.number().min(0).max(1).default(DEFAULT_SHAPE.productLevelShare),
  future_share: z.number().min(0).max(1).default(DEFAULT_SHAPE.futureShare),
  /** Effective dates used in turn (null: no effective date); overrides future_share. */
  effective_dates: z.array(isoDate.nullable()).min(1).optional(),
  grid_id: z.string().optional(),
});
export type InjectApprovalsInput = z.input<typeof InjectApprovals>;

export const AmendApproval = z.strictObject({
  approved_price: z.string().regex(/^\d+(\.\d{1,4})?$/).optional(),
  reason: z.string().min(1).max(1000).optional(),
});
export type AmendApprovalInput = z.input<typeof AmendApproval>;

export class SandboxControl {
  readonly #options: WorldOptions;
  #world: World;

  constructor(options: WorldOptions) {
    this.#options = options;
    this.#world = new World(options);
  }

  /** The current generation of state (replaced by reset()). */
  get world(): World {
    return this.#world;
  }

  get apiKey(): string {
    return this.#world.keys.key;
  }

  get stores(): readonly string[] {
    return this.#world.stores;
  }

  /** Back to the state of a fresh start with the same options: data, key, limits, faults, counters. */
  reset(): void {
    this.#world.lifetime.abort();
    this.#world = new World(this.#options);
  }

  /** Stops the current generation's jobs and timers (used by close()). */
  shutdown(): void {
    this.#world.lifetime.abort();
  }

  state(options: { keys?: boolean } = {}): SandboxState {
    return snapshot(this.#world, options.keys ?? true);
  }

  /** New pending approvals, approved now; returns them as GET history=true would show them. */
  injectApprovals(input: InjectApprovalsInput = {}): Record<string, unknown>[] {
    const options = InjectApprovals.parse(input);
    const world = this.#world;
    const stores = options.stores ?? world.stores;
    const unknown = stores.filter((store) => !world.storeSet.has(store));
    if (unknown.length > 0) throw new ControlError(422, `unknown store(s): ${unknown.join(', ')}`);
    if (options.grid_id !== undefined && !world.grids.byId(options.grid_id)) {
      throw new ControlError(422, `unknown grid ${options.grid_id}`);
    }
    const rows = world.approvals.add(options.count, world.now(), 0, {
      stores,
      productLevelShare: options.product_level_share,
      futureShare: options.future_share,
      effectiveDates: options.effective_dates,
      gridId: options.grid_id,
    });
    return rows.map((row) => approvalJson(row, false));
  }

  /** A new version of approval `id` (predecessor_id = id); `id` becomes superseded. Returns the new version. */
  amend(id: number, input: AmendApprovalInput = {}): Record<string, unknown> {
    const options = AmendApproval.parse(input);
    const outcome = this.#world.approvals.amend(id, this.#world.now(), options.approved_price, options.reason);
    if (typeof outcome === 'string') throw new ControlError(this.#world.approvals.get(id) ? 409 : 404, outcome);
    return approvalJson(outcome, false);
  }

  /** Sets cancelled_at on approval `id`. */
  cancel(id: number): Record<string, unknown> {
    const outcome = this.#world.approvals.cancel(id, this.#world.now());
    if (typeof outcome === 'string') throw new ControlError(this.#world.approvals.get(id) ? 409 : 404, outcome);
    return approvalJson(outcome, false);
  }

  /** A new API key; the previous one gets 401 from now on. */
  rotateKey(): string {
    return this.#world.keys.rotate();
  }

  /** null turns the rate limit off. */
  setRateLimit(input: RateLimitInput | null): void {
    this.#world.rateLimiter.configure(input === null ? null : RateLimitConfig.parse(input));
  }

  /** null turns faults off. */
  setFaults(input: FaultInput | null): void {
    this.#world.faults.configure(input === null ? null : FaultConfig.parse(input));
  }

  /** Requests matching any rule get 403 ("/v1/grids", "POST /v1/transactions/bulk"); [] allows everything. */
  setDenied(rules: readonly string[]): void {
    this.#world.keys.setDenied(z.array(z.string().min(1)).parse(rules));
  }

  /** false: 409 bodies of acknowledge omit the `conflicts` list. */
  setAckConflictDetail(include: boolean): void {
    this.#world.ackConflictDetail = include;
  }

  addExport(status: ExportState): ExportStatus {
    return this.#world.exports.add(z.enum(EXPORT_STATUSES).parse(status), this.#world.now());
  }
}
