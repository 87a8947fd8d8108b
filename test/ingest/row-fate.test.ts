/** src/ingest/file/row-fate.ts: when a file stops early, and when a file read to the end fails for its rows. */
import { describe, expect, it } from 'vitest';
import { Probation, rowsVerdict } from '../../src/ingest/file/row-fate.ts';
import type { FileCounts } from '../../src/store/push-ledger.ts';

describe('probation', () => {
  it('stops when the first 1,000 rows in file order are all rejected', () => {
    const p = new Probation();
    for (let line = 2; line < 1001; line++) p.rejected(line);
    expect(p.failed).toBe(false);
    p.rejected(1001);
    expect(p.failed).toBe(true);
  });

  it('a valid row waiting for its answer holds the count at its line; refused, the rows after it count', () => {
    const p = new Probation();
    p.valid(2);
    for (let line = 3; line < 1500; line++) p.rejected(line);
    expect(p.failed).toBe(false);
    p.judged(2, 'refused');
    expect(p.failed).toBe(true);
    expect(p.rejectedSoFar).toBe(1498); // lines 2 to 1499
  });

  it('ends with the first accepted row, and a superseded row is not a rejected one', () => {
    const superseded = new Probation();
    superseded.valid(2);
    superseded.judged(2, 'other');
    for (let line = 3; line < 2000; line++) superseded.rejected(line);
    expect(superseded.failed).toBe(false);
    const accepted = new Probation();
    accepted.valid(2);
    accepted.judged(2, 'accepted');
    for (let line = 3; line < 2000; line++) accepted.rejected(line);
    expect(accepted).toMatchObject({ over: true, failed: false });
  });
});

describe('the verdict on a file read to the end', () => {
  const counts = (accepted: number, rejectedLocal: number, failed = 0): FileCounts => ({
    batches: 1, sent: accepted + failed, accepted, failed, rejectedLocal, rejectedApi: failed, superseded: 0, merged: 0, unchanged: 0,
  });
  it('done without rejects, or with some; failed with none accepted, or over the threshold (of the rows that are data)', () => {
    expect(rowsVerdict(counts(10, 0), 10, 0, 1)).toBeNull();
    expect(rowsVerdict(counts(0, 0), 5, 5, 1)).toBeNull(); // every row skipped: nothing was rejected
    expect(rowsVerdict(counts(9, 1), 10, 0, 1)).toBeNull();
    expect(rowsVerdict(counts(0, 3, 2), 5, 0, 1)?.code).toBe('NOTHING_ACCEPTED');
    expect(rowsVerdict(counts(4, 6), 10, 0, 0.5)?.code).toBe('TOO_MANY_REJECTED');
    expect(rowsVerdict(counts(4, 6), 22, 12, 0.6)).toBeNull(); // 6 of 10 data rows: not more than 60 %
  });
});
