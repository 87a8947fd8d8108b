/**
 * The brakes: a file that would change too much of what the platform holds is not sent, but held for a person
 * (held-files.ts). Judged on the comparison, before any row is sent:
 *
 * - max_changed_share: known keys whose row the file changes, over the keys the agent knows for the source. New keys
 *   do not count (they add to what the platform holds: a source growing from a test file to its full export is not
 *   held), nor rows sent again to put right a change made on the platform, nor rows that count as changed only
 *   because the source's mapping changed (a person did that).
 * - max_missing_share: keys a snapshot would delete (`missing: delete`) over the known keys.
 * - max_price_change_pct: the largest move of a price from the lower to the higher value (canonical.ts).
 *
 * A source with no known keys yet (its first file) is not braked: there is nothing to protect. `false` turns one off.
 */
import type { Brakes } from '../../config/delta-schema.ts';
import type { Comparison } from './compare.ts';

export interface TrippedBrake {
  readonly brake: 'max_changed_share' | 'max_missing_share' | 'max_price_change_pct';
  readonly limit: number;
  readonly value: number;
  /** One sentence for the report, the log and `status`. */
  readonly message: string;
}

const pct = (share: number) => `${(share * 100).toFixed(1)} %`;

export function trippedBrakes(brakes: Brakes, comparison: Comparison, deletes: boolean): TrippedBrake[] {
  const { counts } = comparison;
  if (counts.known === 0) return [];
  const tripped: TrippedBrake[] = [];
  const changedShare = counts.changed / counts.known;
  if (brakes.max_changed_share !== false && changedShare > brakes.max_changed_share) {
    tripped.push({
      brake: 'max_changed_share',
      limit: brakes.max_changed_share,
      value: changedShare,
      message: `${counts.changed} known keys would change: ${pct(changedShare)} of the ${counts.known} known keys (limit ${pct(brakes.max_changed_share)})`,
    });
  }
  const missingShare = counts.missing / counts.known;
  if (deletes && brakes.max_missing_share !== false && missingShare > brakes.max_missing_share) {
    tripped.push({
      brake: 'max_missing_share',
      limit: brakes.max_missing_share,
      value: missingShare,
      message: `${counts.missing} known keys are missing and would be deleted: ${pct(missingShare)} (limit ${pct(brakes.max_missing_share)})`,
    });
  }
  const move = comparison.maxPriceMovePct;
  if (brakes.max_price_change_pct !== false && move !== null && move > brakes.max_price_change_pct) {
    const largest = comparison.priceMoves[0];
    const example = largest ? ` (line ${largest.line}: ${largest.before} -> ${largest.after})` : '';
    tripped.push({
      brake: 'max_price_change_pct',
      limit: brakes.max_price_change_pct,
      value: move,
      message: `a price would move by ${Number.isFinite(move) ? `${Math.round(move)} %` : 'from or to zero'}${example} (limit ${brakes.max_price_change_pct} %)`,
    });
  }
  return tripped;
}
