/**
 * What happens to a row, and what that means for its file: the one home of the rules, used by bulk and import
 * sending, the dry run and the file's finish (push-file.ts).
 *
 * Every row read has exactly one fate:
 * - sent: to the API, which accepted it or refused it (`rejected_by_api`);
 * - unchanged: not sent because the platform already holds it as it is (delta push, issue 13; 0 until then);
 * - rejected (locally): invalid, never sent; every problem of the row is listed in the rejects CSV;
 * - superseded: another row of the file with the same business key counts instead (duplicate-keys.ts);
 * - merged: added up into another row of the file with the same key, which is sent with the sums (`duplicate_keys:
 *   sum`, transactions: two till lines of one sale; duplicate-keys.ts);
 * - skipped: `skip_rows` says it is not data (continuation or image-only rows).
 * So read = sent + unchanged + rejected + superseded + merged + skipped, and sent = accepted + rejected_by_api.
 *
 * And the file's fate (besides a file-level failure such as an unreadable file):
 * - failed when rows were rejected and none was accepted (nor unchanged), or when more rows than `reject_threshold` were rejected;
 *   detected early: when the first PROBATION_ROWS rows judged are all rejected, nothing more is sent;
 * - done otherwise (some rows rejected: exit 3; none: exit 0).
 */
import type { FileCounts, RejectRow } from '../../store/push-ledger.ts';
import type { RowRejected } from '../read/index.ts';

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
  const rejected = counts.rejectedLocal + counts.failed;
  if (rejected === 0) return null;
  // An unchanged row (delta push) is one the API accepted as it is before: the file is not one of rejects only.
  if (counts.accepted + counts.unchanged === 0) {
    return new RowsRejectedError('NOTHING_ACCEPTED', `all ${rejected} rows that could be sent were rejected (${counts.rejectedLocal} locally, ${counts.failed} by the API) and none accepted`);
  }
  const share = rejected / Math.max(1, rows - skipped);
  if (share > threshold) {
    const percent = (x: number) => `${Math.round(x * 1000) / 10} %`;
    return new RowsRejectedError('TOO_MANY_REJECTED', `${rejected} of ${rows - skipped} rows rejected (${percent(share)}), more than reject_threshold ${percent(threshold)}`);
  }
  return null;
}
