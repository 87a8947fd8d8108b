/**
 * An inbox writer's file that repeats one key on every line (issue 28 point 1): a till that writes one line per unit
 * of a large sale, or a hostile file. The decision stays linear: every line's reject names at most ten other lines
 * (not all n - 1 of them, which is n² in all), and `sum` adds the lines up one at a time into one row with the exact
 * total, keeping no line but the first.
 */
import { describe, expect, it } from 'vitest';
import { FileKeys, loserRow } from '../../src/ingest/file/duplicate-keys.ts';
import { abuseSize } from '../support/abuse.ts';

const LINES = abuseSize(20_000, 1_000_000);

describe(`one key on ${LINES} lines`, () => {
  it('reject: every line is a reject naming ten other lines and how many more', () => {
    const keys = new FileKeys();
    for (let line = 2; line < LINES + 2; line++) keys.add('T-1', line);
    const { losers } = keys.decide('reject');
    keys.close();
    expect(losers.size).toBe(LINES);
    let longest = 0;
    for (const loser of losers.values()) {
      if (loser.fate !== 'rejected') throw new Error(`not rejected: ${JSON.stringify(loser)}`);
      expect(loser.others.length).toBeLessThanOrEqual(10);
      expect(loser.count).toBe(LINES - 1);
    }
    for (const line of [2, 7, LINES + 1]) longest = Math.max(longest, loserRow('transactions', line, losers.get(line)!, []).message.length);
    expect(loserRow('transactions', LINES + 1, losers.get(LINES + 1)!, []).message).toBe(
      `the same transaction_id as lines 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and ${LINES - 11} more (duplicate_keys: reject); none of them was sent`,
    );
    expect(longest).toBeLessThan(200);
  });

  it('sum: one transaction with the exact total; every other line merged into the first', () => {
    const keys = new FileKeys();
    const row = { transaction_id: 'T-1', item_id: 'A', transaction_timestamp: '2026-11-20T08:00:00Z', quantity: '0.1', price: '2.50' };
    for (let line = 2; line < LINES + 2; line++) keys.add('T-1', line, row);
    const { losers, merged } = keys.decide('sum');
    keys.close();
    expect(merged.size).toBe(1);
    // LINES × 0.1, exactly: a float sum of 0.1 drifts within a few thousand additions.
    expect(merged.get(2)).toEqual({ ...row, quantity: `${LINES / 10}.0` });
    expect(losers.size).toBe(LINES - 1);
    expect(losers.get(LINES + 1)).toEqual({ fate: 'merged', winner: 2 });
  });
});
