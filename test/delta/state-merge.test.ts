/**
 * The comparison's merge in two halves of the key range (src/ingest/delta/state-merge.ts, compare.ts UpperHalf),
 * pinned to the merge of the whole range on one thread it replaces: the same verdict for every line, the same counts,
 * price moves (ties at the bottom of the largest included) and largest move, whether the other half's merge succeeds
 * or fails. A real SQLite state in a temp folder; the other half merged here, as the second thread merges it.
 */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareFile, type CompareInput, type Comparison, type UpperHalf } from '../../src/ingest/delta/compare.ts';
import { mergeRuns, SortedRuns } from '../../src/ingest/delta/fast/sorted-runs.ts';
import { keyScan, StateMerge } from '../../src/ingest/delta/state-merge.ts';
import { VERDICT } from '../../src/ingest/delta/verdicts.ts';
import { rememberAccepted } from '../../src/store/delta-state.ts';
import { sqlOf } from '../../src/store/sql-db.ts';
import { tempDir } from '../store/support.ts';
import { key, productStoreScope, storedKey } from './numbered-keys.ts';

const REMEMBERED = 6000;

describe('the merge in two halves of the key range', () => {
  it('decides, counts and ranks price moves as the merge of the whole range, and merges a failed half itself', async () => {
    const { db, scope } = await productStoreScope('halves');
    const GENERATION = 2;
    const FILE = 99;
    // Remembered: most under this generation, some under the last one (remapped), some sent by this file before.
    const remembered = (generation: number, fileId: number, from: number, to: number) =>
      rememberAccepted(
        scope.id,
        generation,
        fileId,
        Array.from({ length: to - from }, (_, j) => {
          const i = from + j;
          return { keyHash: storedKey(i), content: BigInt(i + 1), price: `${10 + (i % 7)}.5`, platformId: null, keyText: null, lineHash: Number.NaN };
        }),
      );
    await sqlOf(db).write(remembered(GENERATION, 7, 0, 5000));
    await sqlOf(db).write(remembered(GENERATION - 1, 7, 5000, 5500));
    await sqlOf(db).write(remembered(GENERATION, FILE, 5500, REMEMBERED));

    // The file: keys 200-6999 (200 missing, 1000 new), every ninth with another content and a price that moves by
    // one of a few amounts (many ties), key 300 on three lines.
    const runsOfFile = async (dir: string): Promise<SortedRuns> => {
      const runs = new SortedRuns(dir, 500);
      let line = 2;
      for (let i = 200; i < 7000; i++) {
        const changed = i % 9 === 0;
        const price = changed ? (10 + (i % 7) + 0.5) * (1 + (i % 4)) : 10 + (i % 7) + 0.5;
        for (let r = 0; r < (i === 300 ? 3 : 1); r++) await runs.add(key(i).hi, key(i).lo, 0, changed ? 1_000_000 + i : i + 1, line++, price);
      }
      return runs;
    };
    const compare = async (upper: ((runs: SortedRuns) => UpperHalf) | null): Promise<Comparison> => {
      const input: CompareInput = {
        db,
        entity: 'product_store',
        scopeId: scope.id,
        generation: GENERATION,
        fileId: FILE,
        fields: ['current_price', 'item_id', 'store_id'],
        duplicateKeys: 'last',
        scratchDir: await mkdtemp(join(tempDir(), 'scratch-')),
        snapshot: false,
      };
      return compareFile(input, async (i) => {
        const runs = await runsOfFile(i.scratchDir);
        return upper === null ? { runs } : { runs, upper: upper(runs) };
      });
    };
    let closed = 0;
    const here = (fail: boolean) => (): UpperHalf => ({
      async merge(files, _settleAtMost, rules) {
        if (fail) throw new Error('the second thread failed');
        const merge = new StateMerge(GENERATION, FILE, null, false, rules);
        const scan = keyScan(db.path, scope.id, -1n, null, null);
        try {
          await merge.run(mergeRuns(files, 'nonNegative'), scan.pages);
        } finally {
          scan.close();
        }
        return { findings: merge.findings(), verdicts: merge.verdicts.bytes() };
      },
      close() {
        closed++;
        return Promise.resolve();
      },
    });

    const whole = await compare(null);
    // Key 300's three rows are alike: the last, which counts, is unchanged; the others are superseded by it.
    expect(whole.counts).toMatchObject({ rows: 6802, known: REMEMBERED, repeated: 0, newKeys: 1000, remapped: 500 });
    expect([102, 103, 104].map((line) => whole.verdicts.get(line))).toEqual([VERDICT.superseded, VERDICT.superseded, VERDICT.unchanged]);
    expect(whole.counts.sentBefore).toBeGreaterThan(0);
    expect(whole.priceMoves).toHaveLength(20);
    for (const halves of [await compare(here(false)), await compare(here(true))]) {
      expect(halves.counts).toEqual(whole.counts);
      for (let line = 2; line < 6805; line++) expect(halves.verdicts.get(line)).toBe(whole.verdicts.get(line));
      expect(halves.priceMoves).toEqual(whole.priceMoves);
      expect(halves.maxPriceMovePct).toBe(whole.maxPriceMovePct);
      expect([halves.winnerOf(102), halves.winnerOf(103)]).toEqual([104, 104]);
    }
    expect(closed).toBe(2);
  });
});
