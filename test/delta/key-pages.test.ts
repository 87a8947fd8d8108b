/**
 * The comparison's remembered keys read by another thread (compare.ts KeyPages, two-halves.ts): when that reading
 * fails part-way, the merge reads on by itself from the last key it got, and decides every line, counts, price move
 * and missing key as the comparison that read every key itself. A real SQLite state in a temp folder.
 */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addKey, compareFile, keyPage, type CompareInput, type Comparison, type KeyPages, type MissingKey } from '../../src/ingest/delta/compare.ts';
import { toSigned64 } from '../../src/ingest/delta/fast/hash.ts';
import { SortedRuns } from '../../src/ingest/delta/fast/sorted-runs.ts';
import { keysAfter, rememberAccepted } from '../../src/store/delta-state.ts';
import { sqlOf } from '../../src/store/sql-db.ts';
import { tempDir } from '../store/support.ts';
import { key, productStoreScope, storedKey } from './numbered-keys.ts';

const REMEMBERED = 5000;

describe('keys read by another thread', () => {
  it('a reading that fails part-way is taken over from the last key it gave: the same comparison', async () => {
    const { db, scope } = await productStoreScope('pages');
    const remembered = Array.from({ length: REMEMBERED }, (_, i) => ({
      keyHash: storedKey(i),
      content: BigInt(i + 1),
      price: `${i}.5`,
      platformId: null,
      keyText: `K${i}`,
      lineHash: Number.NaN,
    }));
    await sqlOf(db).write(rememberAccepted(scope.id, 1, 7, remembered));

    // The file: keys 300-5999 (0-299 missing, 5000 and up new), every tenth with another content and a price tripled.
    const runsOfFile = async (dir: string): Promise<SortedRuns> => {
      const runs = new SortedRuns(dir, 700);
      for (let i = 300; i < 6000; i++) {
        const changed = i % 10 === 0;
        await runs.add(key(i).hi, key(i).lo, 0, changed ? 1_000_000 + i : i + 1, i, changed ? i * 1.5 : i + 0.5);
      }
      return runs;
    };
    const compare = async (keys: (() => KeyPages) | null): Promise<{ comparison: Comparison; missing: MissingKey[] }> => {
      const missing: MissingKey[] = [];
      const input: CompareInput = {
        db,
        entity: 'product_store',
        scopeId: scope.id,
        generation: 1,
        fileId: 99,
        fields: ['current_price', 'item_id', 'store_id'],
        duplicateKeys: 'last',
        scratchDir: await mkdtemp(join(tempDir(), 'scratch-')),
        snapshot: true,
        onMissing: (k) => void missing.push(k),
      };
      const comparison = await compareFile(input, async (i) => ({ runs: await runsOfFile(i.scratchDir), ...(keys === null ? {} : { keys: keys() }) }));
      return { comparison, missing };
    };

    const alone = await compare(null);
    let closed = 0;
    const failing = (): KeyPages => {
      let after: bigint | null = null;
      let served = 0;
      return {
        async next() {
          if (served === 3) throw new Error('the thread reading the keys failed');
          served++;
          const rows = await keysAfter(db, scope.id, after, 1000);
          const page = keyPage(rows.length);
          for (const r of rows) addKey(page, r.keyHi, r.keyLo, r.contentHi, r.contentLo, r.generation, r.price, r.file_id, r.line_hash);
          const last = rows.at(-1);
          if (last !== undefined) after = toSigned64(last.keyHi, last.keyLo);
          return rows.length === 0 ? null : page;
        },
        close() {
          closed++;
          return Promise.resolve();
        },
      };
    };
    const takenOver = await compare(failing);
    expect(closed).toBe(1);

    expect(takenOver.comparison.counts).toEqual(alone.comparison.counts);
    expect(alone.comparison.counts).toMatchObject({ known: REMEMBERED, unchanged: 4230, changed: 470, newKeys: 1000, missing: 300 });
    for (let line = 300; line < 6000; line++) expect(takenOver.comparison.verdicts.get(line)).toBe(alone.comparison.verdicts.get(line));
    expect(takenOver.comparison.priceMoves).toEqual(alone.comparison.priceMoves);
    expect(alone.comparison.priceMoves[0]).toMatchObject({ before: '4990.5', after: '7485', line: 4990 });
    expect(takenOver.comparison.maxPriceMovePct).toBe(alone.comparison.maxPriceMovePct);
    expect(takenOver.missing).toEqual(alone.missing);
  });
});
