/**
 * Why a delta file's rows were sent, one count per reason, as the file's report, `push`'s summary and `files show`
 * give them: their sum is the rows the comparison sent (a row the send pass then rejects locally, or supersedes as a
 * row of a repeated key, is among them).
 */
import type { DeltaFileRecord } from '../../store/delta-state.ts';

export interface SentReasons {
  /** Its content differs from what the API accepted last. */
  changed: number;
  /** Its key was never accepted, nor refused. */
  new: number;
  /** The platform holds something else now (seen by a mirror). */
  changed_on_platform: number;
  /** The API refused its key's last row. */
  refused_before: number;
  /** The source's mapping changed since its key was sent. */
  remapped: number;
  /** Unchanged, sent by a full send (push --full, delta.full_every, the source's first file). */
  forced: number;
}

const WORDS: Readonly<Record<keyof SentReasons, string>> = {
  changed: 'changed',
  new: 'new',
  changed_on_platform: 'changed on the platform',
  refused_before: 'refused by the API before',
  remapped: 'under a changed mapping',
  forced: 'unchanged, sent by a full send',
};

export function sentReasons(d: DeltaFileRecord): SentReasons {
  return {
    changed: d.changed,
    new: d.new_keys,
    changed_on_platform: d.platform_changed,
    refused_before: d.refused_before ?? 0,
    remapped: d.remapped,
    forced: d.forced ?? 0,
  };
}

/** `1 changed on the platform, 2 refused by the API before`: the reasons that sent rows (`none`: nothing was sent). */
export function sentReasonsText(reasons: SentReasons, count: (n: number) => string = String): string {
  const parts = (Object.keys(WORDS) as (keyof SentReasons)[]).filter((k) => reasons[k] > 0).map((k) => `${count(reasons[k])} ${WORDS[k]}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}
