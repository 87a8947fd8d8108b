/**
 * Which names in an inbox are data files. Producers write under a temporary name and rename when done, or drop a
 * marker next to the finished file; the agent never touches a temporary name, a dot-file or a marker.
 */

import { globToRegExp } from '../../name-glob.ts';
import { rejectsStem } from '../file/rejects-csv.ts';

/** Suffixes of names that are still being written by their producer. */
const TEMPORARY_SUFFIXES = ['.tmp', '.part', '.partial', '.crdownload', '.filepart'];

export interface NameRules {
  /** The source's `pattern` (default `*.csv`). */
  readonly pattern: RegExp;
  /** Suffix of the done-marker file (e.g. `.done` for `prices.csv.done`), or null when markers are not used. */
  readonly doneMarker: string | null;
}

export function nameRules(pattern: string, doneMarker: string | null): NameRules {
  return { pattern: globToRegExp(pattern), doneMarker };
}

export function isTemporaryName(name: string): boolean {
  const lower = name.toLowerCase();
  return name.startsWith('.') || name.startsWith('~$') || TEMPORARY_SUFFIXES.some((s) => lower.endsWith(s));
}

/** The data file a marker stands for (`prices.csv.done` -> `prices.csv`), or null if `name` is no marker. */
export function markedFile(name: string, rules: NameRules): string | null {
  if (rules.doneMarker === null || !name.endsWith(rules.doneMarker)) return null;
  const target = name.slice(0, -rules.doneMarker.length);
  return target === '' ? null : target;
}

/**
 * True for a name the agent should pick up (once it is complete): one the pattern takes, or the rejects CSV of one,
 * dropped back corrected (README, "Fix and drop again"), whatever the pattern: `prices.csv.rejects.csv`,
 * `book.xlsx.rejects.csv`, and a fix's own rejects, `book.xlsx.rejects.12.csv.rejects.csv` (the fix was archived
 * under a name with its id: the first file's rejects CSV had its name). The name before the first `.rejects.` is
 * the one the pattern must take.
 */
export function isDataFile(name: string, rules: NameRules): boolean {
  if (isTemporaryName(name)) return false;
  if (markedFile(name, rules) !== null) return false;
  if (rules.pattern.test(name)) return true;
  if (rejectsStem(name) === null) return false;
  const first = name.toLowerCase().indexOf('.rejects.');
  return first > 0 && rules.pattern.test(name.slice(0, first));
}
