/**
 * The delta options of a source (issue 13): `delta`, `snapshot`, `missing` and `brakes`. Kept apart from the reading
 * options so that the fingerprint of a source's mapping (src/ingest/delta/fingerprint.ts) can leave them out: turning
 * a brake up or down is not a change of what the agent sends.
 *
 * Defaults, decided here once:
 * - `delta`: on for products and product_store (full nightly exports, most rows unchanged), off for transactions and
 *   competitor prices (a file of events is already caught by its content hash); `full_every: 7d`.
 * - `snapshot: false`; `missing: report` (a missing key is only named; `delete` needs `snapshot: true`).
 * - brakes: `max_changed_share: 0.5` (half of the known keys changed; new keys do not count), `max_missing_share: 0.05` (a twentieth
 *   of the known keys would be deleted: only with `missing: delete`), `max_price_change_pct: 500` (a price moves by
 *   more than a factor of 6 up or down: a decimal point or separator mistake moves it by 10 or 100). `false` turns
 *   one off; `brakes: false` turns all off.
 */
import { z } from 'zod';
import type { Entity } from '../api/schemas/index.ts';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** `7d`, `36h`, `90m`; returned in ms. */
const duration = z
  .string()
  .trim()
  .regex(/^\d+\s*[dhm]$/, { error: 'a duration such as 7d, 36h or 90m, or false' })
  .transform((text) => {
    const amount = Number.parseInt(text, 10);
    const unit = text.at(-1);
    return amount * (unit === 'd' ? DAY_MS : unit === 'h' ? HOUR_MS : 60_000);
  })
  .refine((ms) => ms > 0, { error: 'must be more than 0 (or false to never force a full send)' });

export const DEFAULT_FULL_EVERY_MS = 7 * DAY_MS;

const deltaOptions = z.strictObject({
  /** Off: the source's files are sent whole every time. */
  enabled: z.boolean().default(true),
  /** A full send of the source at least this often (ms), whatever changed; false: only `push --full`. */
  full_every: z.union([z.literal(false), duration]).default(DEFAULT_FULL_EVERY_MS),
});

/** `delta: true | false | { enabled, full_every }`, before the entity's default is applied. */
export const deltaSchema = z
  .union([z.boolean(), deltaOptions], { error: 'true, false, or { full_every: 7d }' })
  .optional()
  .transform((value) => {
    if (value === undefined) return undefined;
    if (typeof value === 'boolean') return { enabled: value, full_every: DEFAULT_FULL_EVERY_MS } as const;
    return value;
  });

const share = z.number().min(0).max(1);

export const BRAKE_DEFAULTS = { max_changed_share: 0.5, max_missing_share: 0.05, max_price_change_pct: 500 } as const;

const brakeOptions = z.strictObject({
  /** Known keys whose row the file changes, over the keys the agent knows for the source (new keys do not count). */
  max_changed_share: z.union([z.literal(false), share]).default(BRAKE_DEFAULTS.max_changed_share),
  /** Keys a snapshot would delete (`missing: delete`) over the known keys. */
  max_missing_share: z.union([z.literal(false), share]).default(BRAKE_DEFAULTS.max_missing_share),
  /** A price move from the lower to the higher price, in percent (1.99 -> 19.90 and 19.90 -> 1.99 are 900). */
  max_price_change_pct: z.union([z.literal(false), z.number().positive()]).default(BRAKE_DEFAULTS.max_price_change_pct),
});

export const brakesSchema = z
  .union([z.literal(false), brakeOptions], { error: 'false, or { max_changed_share, max_missing_share, max_price_change_pct }' })
  .default(brakeOptions.parse({}))
  .transform((value) => (value === false ? { max_changed_share: false, max_missing_share: false, max_price_change_pct: false } as const : value));

export type Brakes = z.output<typeof brakesSchema>;

/** The keys of a source that belong to delta, and their schemas (merged into the source schema). */
export const deltaSourceFields = {
  /** Send only rows that changed since the API last accepted them; default by entity (deltaDefault). */
  delta: deltaSchema,
  /** Every file of the source is a full export: keys the agent knows but the file lacks are missing. */
  snapshot: z.boolean().default(false),
  /** What happens to missing keys of a snapshot: named in the report, or deleted through the API too. */
  missing: z.enum(['report', 'delete']).default('report'),
  brakes: brakesSchema,
};

/** Whether delta is on for an entity when the source does not say (full exports vs files of events). */
export function deltaDefault(entity: Entity): boolean {
  return entity === 'products' || entity === 'product_store';
}

export interface DeltaSettings {
  readonly enabled: boolean;
  readonly fullEveryMs: number | null;
  readonly snapshot: boolean;
  readonly missing: 'report' | 'delete';
  readonly brakes: Brakes;
}

/**
 * The delta settings of a parsed source, the entity's default applied. Import mode sends whole files for now: an
 * import job says which rows it refused only in some platforms' answers, and never their ids.
 */
export function deltaSettings(source: {
  readonly entity: Entity;
  readonly mode: 'bulk' | 'import';
  readonly delta?: { readonly enabled: boolean; readonly full_every: number | false } | undefined;
  readonly snapshot: boolean;
  readonly missing: 'report' | 'delete';
  readonly brakes: Brakes;
}): DeltaSettings {
  const enabled = (source.delta?.enabled ?? deltaDefault(source.entity)) && source.mode === 'bulk';
  const fullEvery = source.delta?.full_every ?? DEFAULT_FULL_EVERY_MS;
  return {
    enabled,
    fullEveryMs: fullEvery === false ? null : fullEvery,
    snapshot: source.snapshot,
    missing: source.missing,
    brakes: source.brakes,
  };
}
