/** src/ingest/file/row-fate.ts: when a file stops early, and when a file read to the end fails for its rows. */
import { describe, expect, it } from 'vitest';
import { countsOf, finishedRows, Probation, rejectedRows, rowsVerdict, unreconciled, type FileCounts } from '../../src/ingest/file/row-fate.ts';

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
  const counts = (accepted: number, rejectedLocally: number, rejectedByApi = 0): FileCounts => ({
    batches: 1, sent: accepted + rejectedByApi, accepted, rejectedByApi, rejectedLocally, superseded: 0, merged: 0, unchanged: 0, rejectsListed: rejectedLocally + rejectedByApi,
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

describe('the row counts of a file, from its ledger', () => {
  const tallies = {
    batches: 2,
    sent: 10,
    accepted: 7,
    refused: 3,
    unchanged: 4,
    listed: { local: 2, api: 1, superseded: 3, merged: 1 },
    supersededAfterSent: 1,
  };
  it('names each fate once: a row superseded after it was sent is superseded, not sent; the API refusals listed are apart', () => {
    const counts = countsOf(tallies);
    expect(counts).toEqual({ batches: 2, sent: 9, accepted: 6, rejectedByApi: 3, rejectedLocally: 2, superseded: 3, merged: 1, unchanged: 4, rejectsListed: 3 });
    expect(rejectedRows(counts)).toBe(5);
    expect(finishedRows(counts)).toEqual({ sent: 9, accepted: 6, rejected: 5, superseded: 3, merged: 1, unchanged: 4 });
  });

  it('reconciles the rows read with the fates, and says which sum is off when they do not', () => {
    const counts = countsOf(tallies);
    // 6 accepted + 3 refused + 2 rejected + 3 superseded + 1 merged + 4 unchanged + 2 skipped = 21
    expect(unreconciled(counts, 21, 2)).toBeNull();
    expect(unreconciled(counts, 22, 2)).toBe('rows read (22) do not reconcile with accepted 6 + refused 3 + rejected 2 + superseded 3 + merged 1 + unchanged 4 + skipped 2');
  });
});
