/**
 * feedRowsOfPage: which versions of a deliveries page become feed rows, without a database. The store's own tests
 * (test/outbox/price-feed.test.ts, both backends) check that what it decides is what gets committed.
 */
import { describe, expect, it } from 'vitest';
import { feedRowsOfPage } from '../../src/feed-rows.ts';

const price = (id: number) => ({ id });
const cancelled = (id: number) => ({ id, cancelled_at: '2026-11-28T10:00:00Z' });
const kinds = (page: ReturnType<typeof feedRowsOfPage>) => page.rows.map((r) => `${r.kind}:${r.source.id}`);

describe('feedRowsOfPage: approved-price versions into feed rows', () => {
  it('gives a version stored for the first time one price row, and one seen before none', () => {
    const page = feedRowsOfPage([price(1), price(2), price(3)], new Set([1, 3]), new Set());
    expect(kinds(page)).toEqual(['price:1', 'price:3']);
    expect(page.newIds).toEqual([1, 3]);
    expect(page.duplicates).toBe(1);
  });

  it('counts an id repeated in the page as new once, at its first place, with one row', () => {
    const page = feedRowsOfPage([price(7), price(7), price(8)], new Set([7, 8]), new Set());
    expect(kinds(page)).toEqual(['price:7', 'price:8']);
    expect(page.newIds).toEqual([7, 8]);
    expect(page.duplicates).toBe(1);
  });

  it('gives a cancelled version one withdrawal row per id, stored before or not, and no price row', () => {
    const page = feedRowsOfPage([cancelled(4), cancelled(5), cancelled(4)], new Set([4]), new Set());
    expect(kinds(page)).toEqual(['withdrawal:4', 'withdrawal:5']);
    expect(page.newIds).toEqual([4]);
    expect(page.duplicates).toBe(2);
  });

  it('adds no withdrawal for an id whose withdrawal is already in the feed (a replayed page adds nothing)', () => {
    const replay = feedRowsOfPage([price(1), cancelled(2)], new Set(), new Set([2]));
    expect(replay.rows).toEqual([]);
    expect(replay.newIds).toEqual([]);
    expect(replay.duplicates).toBe(2);
  });

  it('leaves the sets it is given as they were', () => {
    const stored = new Set([1]);
    const withdrawn = new Set<number>();
    feedRowsOfPage([cancelled(1)], stored, withdrawn);
    expect([...stored]).toEqual([1]);
    expect([...withdrawn]).toEqual([]);
  });
});
