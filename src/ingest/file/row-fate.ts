/**
 * What happens to a row, and what that means for its file: the one home of the rules and of their names, used by bulk
 * and import sending, the dry run, the file's finish (push-file.ts), its report, `push`, `files` and the console.
 *
 * Every row read has exactly one fate:
 * - sent: to the API, which accepted it or refused it (`rejectedByApi`);
 * - unchanged: not sent because the platform already holds it as it is (delta push, issue 13; 0 until then);
 * - rejected (locally): invalid, never sent; every problem of the row is listed in the rejects CSV;
 * - superseded: another row of the file with the same business key counts instead (duplicate-keys.ts);
 * - merged: added up into another row of the file with the same key, which is sent with the sums (`duplicate_keys:
 *   sum`, transactions: two till lines of one sale; duplicate-keys.ts);
 * - skipped: `skip_rows` says it is not data (continuation or image-only rows).
 * So read = sent + unchanged + rejectedLocally + superseded + merged + skipped, and sent = accepted + rejectedByApi
 * (reconcile() checks it for every file; skipped rows and the rows read come from the reader).
 *
 * And the file's fate (besides a file-level failure such as an unreadable file):
 * - failed when rows were rejected and none was accepted (nor unchanged), or when more rows than `reject_threshold` were rejected;
 *   detected early: when the first PROBATION_ROWS rows judged are all rejected, nothing more is sent;
 * - done otherwise (some rows rejected: exit 3; none: exit 0).
 */
import { ledgerTallies, type FinishedRows, type LedgerTallies, type RejectRow } from '../../store/push-ledger.ts';
import type { StateDb } from '../../store/state-db.ts';
import type { RowRejected } from '../read/index.ts';

/** The rows of a file by fate (the ledger's tallies, read as fates). */
export interface FileCounts {
  readonly batches: number;
  /** Rows sent and not superseded afterwards: accepted + rejectedByApi. */
  readonly sent: number;
  /** Rows the platform holds from this file. */
  readonly accepted: number;
  /** Rows the API refused (the batches' results; an import job may list only its first errors: see rejectsListed). */
  readonly rejectedByApi: number;
  /** Rows rejected before sending (invalid), each listed with its problems. */
  readonly rejectedLocally: number;
  readonly superseded: number;
  /** Rows added up into another row of the file with the same key (duplicate_keys: sum): not sent on their own. */
  readonly merged: number;
  readonly unchanged: number;
  /** The rejects listed row by row (the rejects CSV): every local one, and the API's refusals it named. */
  readonly rejectsListed: number;
}

export function countsOf(t: LedgerTallies): FileCounts {
  // A row superseded after it was sent and accepted: superseded, no longer sent or accepted.
  return {
    batches: t.batches,
    sent: t.sent - t.supersededAfterSent,
    accepted: t.accepted - t.supersededAfterSent,
    rejectedByApi: t.refused,
    rejectedLocally: t.listed.local,
    superseded: t.listed.superseded,
    merged: t.listed.merged,
    unchanged: t.unchanged,
    rejectsListed: t.listed.local + t.listed.api,
  };
}

/** The file's row counts as its ledger holds them now. */
export async function fileCounts(db: StateDb, fileId: number): Promise<FileCounts> {
  return countsOf(await ledgerTallies(db, fileId));
}

/** Rows rejected, locally or by the API. */
export function rejectedRows(counts: FileCounts): number {
  return counts.rejectedLocally + counts.rejectedByApi;
}

/** The counts push_files keeps of a finished file. */
export function finishedRows(counts: FileCounts): FinishedRows {
  const { sent, accepted, superseded, merged, unchanged } = counts;
  return { sent, accepted, rejected: rejectedRows(counts), superseded, merged, unchanged };
}

/** Null when every row read has one fate; else the sentence that fails the file (a bug, not to be hidden). */
export function unreconciled(counts: FileCounts, read: number, skipped: number): string | null {
  const c = counts;
  if (read === c.accepted + c.rejectedByApi + c.rejectedLocally + c.superseded + c.merged + c.unchanged + skipped) return null;
  return `rows read (${read}) do not reconcile with accepted ${c.accepted} + refused ${c.rejectedByApi} + rejected ${c.rejectedLocally} + superseded ${c.superseded} + merged ${c.merged} + unchanged ${c.unchanged} + skipped ${skipped}`;
}

/** Rows judged before a file whose rows are all rejected is stopped. */
export const PROBATION_ROWS = 1000;

/** A locally rejected row as the ledger keeps it: its first problem, every problem, its fields as in the file. */
export function localReject(outcome: RowRejected): RejectRow {
  const { line, field, code, message, rawFields, errors } = outcome;
  return { line, stage: 'local', field, code, message, errors: errors.map((e) => ({ field: e.field, code: e.code, message: e.message })), raw: rawFields };
}

/**
 * The start of a file, until its first row is accepted. While nothing has been accepted, one batch at a time is in
 * flight, and the file is stopped once its first PROBATION_ROWS rows, in file order, are all rejected (locally, by
 * the API, or as duplicates). A valid row whose answer is still to come holds the count at its line: the rows after it
 * count once it is rejected too.
 *
 * The rows are tracked in file order only until the first row is accepted (then nothing is kept): at most a few
 * batches of lines.
 */
export class Probation {
  #accepted = 0;
  /** The rows of the file so far, in file order: rejected, waiting for their answer, or neither. */
  #lines: number[] = [];
  #states: ('rejected' | 'pending' | 'other')[] = [];
  readonly #at = new Map<number, number>();
  /** Rows at the start of the file known rejected: the first #head entries. */
  #head = 0;

  /** A file resumed after a restart with rows already accepted sends at full speed. */
  resume(accepted: number): void {
    this.#accepted += accepted;
    if (this.over) this.#forget();
  }

  /** A locally rejected row. */
  rejected(line: number): void {
    this.#add(line, 'rejected');
  }

  /** A valid row read, its answer still to come. */
  valid(line: number): void {
    this.#add(line, 'pending');
  }

  /** A valid row judged: accepted, refused (by the API, or as a duplicate), or neither (superseded, merged). */
  judged(line: number, fate: 'accepted' | 'refused' | 'other'): void {
    if (fate === 'accepted') {
      this.acceptedBefore(1);
      return;
    }
    const at = this.#at.get(line);
    if (at === undefined) return;
    this.#states[at] = fate === 'refused' ? 'rejected' : 'other';
    this.#advance();
  }

  /** `count` rows accepted, as they are, before (delta push's unchanged rows): judged at once. */
  acceptedBefore(count: number): void {
    this.#accepted += count;
    this.#forget();
  }

  /** Some row was accepted: the file sends at full speed. */
  get over(): boolean {
    return this.#accepted > 0;
  }

  /** The first PROBATION_ROWS rows of the file were all rejected. */
  get failed(): boolean {
    return this.#accepted === 0 && this.#head >= PROBATION_ROWS;
  }

  get rejectedSoFar(): number {
    return this.#head;
  }

  #add(line: number, state: 'rejected' | 'pending'): void {
    if (this.over) return;
    this.#at.set(line, this.#lines.length);
    this.#lines.push(line);
    this.#states.push(state);
    this.#advance();
  }

  #advance(): void {
    while (this.#states[this.#head] === 'rejected') this.#head += 1;
  }

  #forget(): void {
    if (this.#lines.length === 0) return; // once per accepted row (and per unchanged one): nothing to drop most times
    this.#lines = [];
    this.#states = [];
    this.#at.clear();
  }
}

/** The error that fails a file whose rows are all rejected (or too many of them). Its report is in failed/. */
export class RowsRejectedError extends Error {
  readonly code: 'NOTHING_ACCEPTED' | 'TOO_MANY_REJECTED';
  constructor(code: RowsRejectedError['code'], message: string) {
    super(message);
    this.name = 'RowsRejectedError';
    this.code = code;
  }
}

/** The error of a file stopped early: the first PROBATION_ROWS rows were all rejected. */
export function stoppedEarly(probation: Probation): RowsRejectedError {
  return new RowsRejectedError(
    'NOTHING_ACCEPTED',
    `the first ${probation.rejectedSoFar} rows judged were all rejected and none accepted; the rest of the file was not sent (see the rejects: often a mapping, decimal separator or date format that does not fit the file)`,
  );
}

/**
 * The verdict on a file read to the end: null when it is done, else why it fails. `rows` are the rows read, of which
 * `skipped` are not data (the share of rejected rows is of the others).
 */
export function rowsVerdict(counts: FileCounts, rows: number, skipped: number, threshold: number): RowsRejectedError | null {
  const rejected = rejectedRows(counts);
  if (rejected === 0) return null;
  // An unchanged row (delta push) is one the API accepted as it is before: the file is not one of rejects only.
  if (counts.accepted + counts.unchanged === 0) {
    return new RowsRejectedError('NOTHING_ACCEPTED', `all ${rejected} rows that could be sent were rejected (${counts.rejectedLocally} locally, ${counts.rejectedByApi} by the API) and none accepted`);
  }
  const share = rejected / Math.max(1, rows - skipped);
  if (share > threshold) {
    const percent = (x: number) => `${Math.round(x * 1000) / 10} %`;
    return new RowsRejectedError('TOO_MANY_REJECTED', `${rejected} of ${rows - skipped} rows rejected (${percent(share)}), more than reject_threshold ${percent(threshold)}`);
  }
  return null;
}
