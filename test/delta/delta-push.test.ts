/**
 * Delta push against the sandbox over HTTP and a real SQLite state: unchanged rows are not sent, changed and new
 * ones are, and the report reconciles read = sent + unchanged + rejected + superseded.
 */
import { readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushHarness, type PushHarness } from '../support/push-harness.ts';
import { pushFile, type FileResult, type PushDeps } from '../../src/ingest/file/push-file.ts';
import { spareWaiting } from '../../src/ingest/delta/spare-half.ts';
import { storedKeyHash } from '../../src/ingest/delta/compare.ts';
import { BUSINESS_KEYS } from '../../src/api/schemas/index.ts';
import { findScope, markPlatformChanged } from '../../src/store/delta-state.ts';
import { sqlOf } from '../../src/store/sql-db.ts';
import { filesTable } from '../../src/console/file-table.ts';
import { fileBody } from '../../src/console/file-page.ts';
import { alerts } from '../../src/console/overview-page.ts';
import type { StatusReport } from '../../src/status/status-report.ts';
import { listFiles, showFile } from '../../src/status/file-list.ts';
import { heldDetail, heldFileList } from '../../src/status/held-files.ts';

let h: PushHarness;
let stores: readonly string[];
beforeAll(async () => {
  h = await pushHarness();
  stores = h.sandbox.control.state().stores;
});
afterAll(() => h.close());

type Report = { rows: Record<string, number>; delta: Record<string, unknown> | null; superseded: { line: number }[] };

async function reportOf(result: FileResult): Promise<Report> {
  if (result.outcome !== 'done') throw new Error(`expected done, got ${JSON.stringify(result)}`);
  return JSON.parse(await readFile(result.reportPath, 'utf8')) as Report;
}

function storeCsv(rows: readonly [string, number, string][]): string {
  return `item_id,store_id,current_price\n${rows.map(([item, store, price]) => `${item},${stores[store]},${price}`).join('\n')}\n`;
}

/** Every request the sandbox answered (the push sends nothing else). */
function requests(): number {
  return h.sandbox.control.state().requests.total;
}

describe('delta push', () => {
  it('sends only changed and new rows of a full export; unchanged rows are counted, not sent', async () => {
    const source = await h.source('product_store', { delta: true, batch_size: 2 });
    const day1: [string, number, string][] = [
      ['A', 0, '1.00'],
      ['A', 1, '2.00'],
      ['B', 0, '3.00'],
      ['B', 1, '4.00'],
    ];
    const first = await reportOf(await h.push(source, 'day1.csv', storeCsv(day1)));
    expect(first.rows).toMatchObject({ read: 4, sent: 4, accepted: 4, unchanged: 0 });
    expect(first.delta).toMatchObject({ mode: 'full', reason: 'first file of the source', new: 4, known_keys: 0 });

    const before = requests();
    // Same rows, one price changed (written differently but the same for the two unchanged decimals), one new key.
    const day2: [string, number, string][] = [
      ['A', 0, '1.0'],
      ['A', 1, '2.50'],
      ['B', 0, '3.00'],
      ['B', 1, '4.00'],
      ['C', 0, '5.00'],
    ];
    const second = await reportOf(await h.push(source, 'day2.csv', storeCsv(day2)));
    expect(second.rows).toMatchObject({ read: 5, sent: 2, accepted: 2, unchanged: 3, rejected: 0, superseded: 0 });
    expect(second.delta).toMatchObject({ mode: 'delta', known_keys: 4, changed: 1, new: 1 });
    expect(requests() - before).toBe(1); // one batch of the two rows
    const onPlatform = h.sandbox.control.state({ keys: true });
    expect(onPlatform.product_store.keys).toEqual(expect.arrayContaining([{ item_id: 'C', store_id: stores[0] }]));

    // The same content again: compared, not skipped as a duplicate; nothing to send.
    const third = await h.push(source, 'day3.csv', storeCsv(day2));
    const r3 = await reportOf(third);
    expect(r3.rows).toMatchObject({ read: 5, sent: 0, unchanged: 5 });
  });

  it('compares a key the file holds twice by its winning row; when that changed, sends both under the superseded-row rule', async () => {
    const source = await h.source('product_store', { delta: true, batch_size: 2 });
    await reportOf(await h.push(source, 'd1.csv', storeCsv([['K', 0, '1.00'], ['L', 0, '2.00']])));
    // K twice, its later row (the one that counts) as remembered, L unchanged: nothing sent, the earlier K row
    // superseded by the later one.
    const before = requests();
    const r = await reportOf(await h.push(source, 'd2.csv', storeCsv([['K', 0, '9.00'], ['L', 0, '2.00'], ['K', 0, '1.00']])));
    expect(r.rows).toMatchObject({ read: 3, sent: 0, accepted: 0, unchanged: 2, superseded: 1 });
    expect(r.superseded).toEqual([expect.objectContaining({ line: 2 })]);
    expect(requests()).toBe(before);
    // In two batches: both sent, in file order, so the later one wins on the platform; the earlier counts as
    // superseded once the file is through (duplicate-keys.ts), and the later one is what delta remembers.
    const r3 = await reportOf(await h.push(source, 'd3.csv', storeCsv([['K', 0, '3.00'], ['M', 0, '5.00'], ['K', 0, '4.00']])));
    expect(r3.rows).toMatchObject({ read: 3, sent: 2, accepted: 2, superseded: 1 });
    const k = [...h.sandbox.control.world.productStore.table.rows()].find((row) => row.item_id === 'K' && row.store_id === stores[0]);
    expect(k?.current_price).toBe('4.00');
  });

  it('does not remember a row the API refused: the next file sends it again', async () => {
    const source = await h.source('product_store', { delta: true });
    // A store the platform does not know: valid locally, refused by the API (unknown_store).
    const unknownStore = '00000000-0000-4000-8000-00000000abcd';
    const file = `item_id,store_id,current_price\nU1,${stores[0]},1.00\nU2,${unknownStore},2.00\n`;
    const before = requests();
    const first = await h.push(source, 'day1.csv', file);
    expect(first.outcome).toBe('done');
    const r1 = await reportOf(first);
    expect(r1.rows).toMatchObject({ read: 2, sent: 2, accepted: 1, rejected_by_api: 1 });
    const r2 = await reportOf(await h.push(source, 'day2.csv', file));
    expect(r2.rows).toMatchObject({ read: 2, sent: 1, accepted: 0, rejected_by_api: 1, unchanged: 1 });
    expect(requests() - before).toBe(2);
  });

  it('a changed row takes fill_down values from an unchanged row above it, which the send pass does not map', async () => {
    const source = await h.source('product_store', { delta: true, brakes: false, fill_down: ['store_id'] });
    const csv = (b: string) => `item_id,store_id,current_price\nF1,${stores[1]},1.00\nF2,,${b}\n`;
    expect((await reportOf(await h.push(source, 'day1.csv', csv('2.00')))).rows).toMatchObject({ read: 2, sent: 2, accepted: 2 });
    const r = await reportOf(await h.push(source, 'day2.csv', csv('2.50')));
    expect(r.rows).toMatchObject({ read: 2, sent: 1, accepted: 1, unchanged: 1, rejected: 0 });
    const f2 = [...h.sandbox.control.world.productStore.table.rows()].filter((row) => row.item_id === 'F2');
    expect(f2.map((row) => [row.store_id, row.current_price])).toEqual([[stores[1], '2.50']]);
  });

  it('sends a products file with a custom column whole as an import, not compared, after the header was read once', async () => {
    // The reader opened for the header is the comparison's; a custom column makes the file an import, whose send
    // pass validates every row: that reader is closed, and the import reads the file on its own.
    const source = await h.source('products', { delta: true });
    const csv = 'item_id,sku,product_name,Farbe\nC1,C1,Apfel,rot\nC2,C2,Birne,gelb\n';
    const result = await h.push(source, 'custom.csv', csv);
    const report = (await reportOf(result)) as Report & { job_id: string | null; warnings: string[] };
    expect(report.rows).toMatchObject({ read: 2, sent: 2, accepted: 2, unchanged: 0 });
    expect(report.delta).toBeNull();
    expect(report.job_id).not.toBeNull();
    expect(report.warnings.join('\n')).toMatch(/custom column "Farbe" and the rest of the file went as a CSV import job/);
    expect(result.outcome === 'done' && result.file.mode).toBe('import');
  });

  it('compares a file in two halves on two threads as on one: the same rows sent, counted and remembered', async () => {
    const source = await h.source('product_store', { delta: true, brakes: false, batch_size: 3 });
    const debug: string[] = [];
    const logger = Object.assign(Object.create(h.deps.logger) as PushDeps['logger'], { debug: (_: unknown, message: string) => debug.push(message) });
    const deps: PushDeps = { ...h.deps, logger, splitBytes: 1 };
    const halves = {
      async push(name: string, csv: string): Promise<FileResult> {
        await writeFile(join(source.inbox, name), csv);
        return pushFile(deps, source, join(source.inbox, name));
      },
    };
    const day = (changed: number) =>
      storeCsv(Array.from({ length: 24 }, (_, i): [string, number, string] => [`H${i}`, i % 2, `${i}.${i === changed ? '99' : '00'}`]));
    expect((await reportOf(await halves.push('h1.csv', day(-1)))).rows).toMatchObject({ read: 24, sent: 24, accepted: 24 });
    // Changed rows in the first half (line 4) and in the second (line 22): found, sent, and remembered from both.
    const r2 = await reportOf(await halves.push('h2.csv', day(2).replace('H20,', 'H20x,')));
    expect(r2.rows).toMatchObject({ read: 24, sent: 2, accepted: 2, unchanged: 22 });
    expect(r2.delta).toMatchObject({ changed: 1, new: 1 });
    const r3 = await reportOf(await halves.push('h3.csv', day(2).replace('H20,', 'H20x,')));
    expect(r3.rows).toMatchObject({ read: 24, sent: 0, unchanged: 24 });
    expect(debug).not.toContain('compared on one thread'); // the two halves were used every time
    expect(debug).not.toContain('merged on one thread'); // and the second thread merged its half of the keys
    expect(spareWaiting()).toBe(false); // the thread started ahead of each file was taken by its first pass

    // A quoted cell of many lines across the cut: the halves are given up (the second thread, asked to stop, ends
    // before it reads any key) and the file is compared on one thread: the same result.
    const quoted = `item_id,store_id,current_price,note\n${Array.from({ length: 24 }, (_, i) => `H${i},${stores[i % 2]},${i}.${i === 2 ? '99' : '00'},${i === 12 ? `"${'x\n'.repeat(400)}"` : ''}`).join('\n')}\n`;
    const r4 = await reportOf(await halves.push('h4.csv', quoted.replace('H20,', 'H20x,')));
    expect(r4.rows).toMatchObject({ read: 24, sent: 0, unchanged: 24 });
    expect(debug).toContain('compared on one thread');

    // A source whose files are compared on one thread (fill_down): the thread started ahead is ended with the file.
    const filled = await h.source('product_store', { delta: true, brakes: false, fill_down: ['store_id'] });
    await writeFile(join(filled.inbox, 'f1.csv'), day(-1));
    expect((await reportOf(await pushFile(deps, filled, join(filled.inbox, 'f1.csv')))).rows).toMatchObject({ read: 24, sent: 24 });
    expect(spareWaiting()).toBe(false);
  });

  it('in line mode decides by its cells a row whose line is unchanged, and every other row by its content', async () => {
    const source = await h.source('product_store', { delta: true, brakes: false, batch_size: 5 });
    const debug: string[] = [];
    const reasons: string[] = [];
    const logger = Object.assign(Object.create(h.deps.logger) as PushDeps['logger'], {
      debug: (fields: { reason?: string }, message: string) => {
        debug.push(message);
        reasons.push(fields.reason ?? '');
      },
    });
    const deps: PushDeps = { ...h.deps, logger, splitBytes: 1 };
    const push = async (name: string, csv: string): Promise<FileResult> => {
      await writeFile(join(source.inbox, name), csv);
      return pushFile(deps, source, join(source.inbox, name));
    };
    const rows = (price: (i: number) => string) => Array.from({ length: 24 }, (_, i): [string, number, string] => [`L${i}`, i % 2, price(i)]);
    expect((await reportOf(await push('l1.csv', storeCsv(rows((i) => `${i}.50`))))).rows).toMatchObject({ read: 24, sent: 24, accepted: 24 });
    // Every accepted row is remembered with the hash of its line, a signed 48-bit integer.
    const scope = await findScope(h.deps.db, source.name);
    if (scope === undefined) throw new Error('no scope');
    const lineHashes = (await sqlOf(h.deps.db).all<{ line_hash: number | null }>(`SELECT line_hash FROM delta_keys WHERE scope_id = ?`, [scope.id])).map((r) => r.line_hash);
    expect(lineHashes).toHaveLength(24);
    for (const hash of lineHashes) expect(Number.isSafeInteger(hash) && Math.abs(hash as number) <= 2 ** 47).toBe(true);

    // L2's line changed but not its row (2.500 is 2.5): unchanged. L5 changed. L20's line is as remembered, but the
    // platform changed its row since: sent again. L23 gone, L23x new.
    const l20 = storedKeyHash(BUSINESS_KEYS.product_store({ item_id: 'L20', store_id: stores[0] }));
    await markPlatformChanged(h.deps.db, scope.id, [l20], null);
    const day2 = rows((i) => (i === 2 ? '2.500' : i === 5 ? '5.75' : `${i}.50`));
    const r2 = await reportOf(await push('l2.csv', storeCsv(day2).replace('L23,', 'L23x,')));
    expect(r2.rows).toMatchObject({ read: 24, sent: 3, accepted: 3, unchanged: 21 });
    expect(r2.delta).toMatchObject({ changed: 1, new: 1, changed_on_platform: 1 });
    expect(debug).not.toContain('compared on one thread');
    expect(debug).toContain('compared line by line'); // four of 24 lines undecided (one a new key): settled one by one
    expect(debug).not.toContain('compared by content');

    // The same rows with the columns in another order: no line hash is remembered under this header, so more than a
    // quarter of the lines are undecided and the file is compared by content: the same verdicts.
    const reordered = `store_id,item_id,current_price\n${day2.map(([item, store, price]) => `${stores[store]},${item === 'L23' ? 'L23x' : item},${price}`).join('\n')}\n`;
    const r3 = await reportOf(await push('l3.csv', reordered));
    expect(r3.rows).toMatchObject({ read: 24, sent: 0, unchanged: 24 });
    expect(debug).toContain('compared by content');
    expect(reasons).toContain('24 of 24 rows not settled by their line\'s hash');

    // The next file of that header is compared by content at once: no line pass that would give way again.
    debug.length = 0;
    reasons.length = 0;
    const r3b = await reportOf(await push('l3b.csv', reordered));
    expect(r3b.rows).toMatchObject({ read: 24, sent: 0, unchanged: 24 });
    expect(reasons).toContain('line mode gave way for files of this header and agent version: compared by content until every row is sent again');
    expect(debug).not.toContain('compared line by line');
    // Until every row is sent again (push --full): remembered with this header's line hashes, compared line by line.
    await writeFile(join(source.inbox, 'l3c.csv'), reordered);
    expect((await reportOf(await pushFile(deps, source, join(source.inbox, 'l3c.csv'), { full: true }))).rows).toMatchObject({ read: 24, sent: 24 });
    debug.length = 0;
    const r3d = await reportOf(await push('l3d.csv', reordered));
    expect(r3d.rows).toMatchObject({ read: 24, sent: 0, unchanged: 24 });
    expect(debug).toContain('compared line by line');

    // Keys remembered without a line hash (by an agent before line hashes): line mode is not even tried.
    await sqlOf(h.deps.db).write((tx) => tx.run(`UPDATE delta_keys SET line_hash = NULL WHERE scope_id = ?`, [scope.id]));
    reasons.length = 0;
    const r4 = await reportOf(await push('l4.csv', storeCsv(day2).replace('L23,', 'L23x,')));
    expect(r4.rows).toMatchObject({ read: 24, sent: 0, unchanged: 24 });
    expect(reasons).toContain('0 % of a sample of the keys have a line hash');
  });

  it('in line mode and in content mode compares a repeated key by the row duplicate_keys makes count', async () => {
    for (const policy of ['last', 'first'] as const) {
      const source = await h.source('product_store', { delta: true, brakes: false, batch_size: 5, duplicate_keys: policy });
      const debug: string[] = [];
      const logger = Object.assign(Object.create(h.deps.logger) as PushDeps['logger'], { debug: (_: unknown, message: string) => debug.push(message) });
      const push = async (name: string, csv: string, splitBytes?: number): Promise<FileResult> => {
        await writeFile(join(source.inbox, name), csv);
        return pushFile({ ...h.deps, logger, ...(splitBytes === undefined ? {} : { splitBytes }) }, source, join(source.inbox, name));
      };
      const rows = Array.from({ length: 24 }, (_, i): [string, number, string] => [`P${i}`, i % 2, `${i}.50`]);
      expect((await reportOf(await push('p1.csv', storeCsv(rows), 1))).rows).toMatchObject({ read: 24, sent: 24 });
      // P3 twice: the row that counts as remembered, the other changed. P4 twice: the row that counts changed.
      const early: [string, number, string][] = policy === 'last' ? [['P3', 1, '7.00'], ['P4', 0, '4.50']] : [['P3', 1, '3.50'], ['P4', 0, '8.00']];
      const late: [string, number, string][] = policy === 'last' ? [['P3', 1, '3.50'], ['P4', 0, '8.00']] : [['P3', 1, '7.00'], ['P4', 0, '4.50']];
      const others = rows.filter(([item]) => item !== 'P3' && item !== 'P4');
      const day2 = [...others.slice(0, 2), ...early, ...late, ...others.slice(2)];
      for (const splitBytes of [1, undefined]) {
        debug.length = 0;
        const r = await reportOf(await push(`p2-${splitBytes ?? 'one'}.csv`, storeCsv(day2), splitBytes));
        // P4: its row that counts is sent, the other superseded by the send pass; P3: unchanged, its other row
        // superseded, neither sent.
        expect(r.rows).toMatchObject({ read: 26, sent: 1, unchanged: 23, superseded: 2 });
        expect(r.delta).toMatchObject({ changed: 1, new: 0, changed_on_platform: 0, refused_before: 0 });
        expect(debug.includes('compared line by line')).toBe(splitBytes === 1);
        const p4Row = [...h.sandbox.control.world.productStore.table.rows()].find((row) => row.item_id === 'P4' && row.store_id === stores[0]);
        expect(p4Row?.current_price).toBe('8.00');
        // Put back for the next pass.
        expect((await reportOf(await push(`p3-${splitBytes ?? 'one'}.csv`, storeCsv(rows), 1))).rows).toMatchObject({ sent: 1, unchanged: 23 });
      }
    }
  });

  it('in line mode hashes only the cells the mapping reads: an export timestamp on every line changes nothing', async () => {
    const source = await h.source('product_store', { delta: true, brakes: false, batch_size: 5 });
    const debug: string[] = [];
    const logger = Object.assign(Object.create(h.deps.logger) as PushDeps['logger'], { debug: (_: unknown, message: string) => debug.push(message) });
    const deps: PushDeps = { ...h.deps, logger, splitBytes: 1 };
    // exported_at is no product_store field: the mapping does not read it. A quoted name holding the delimiter is read.
    const csv = (at: string, changed: number) =>
      `item_id,store_id,current_price,exported_at\n${Array.from({ length: 24 }, (_, i) => `"T,${i}",${stores[i % 2]},${i === changed ? '99.00' : `${i}.50`},${at}`).join('\n')}\n`;
    const push = async (name: string, text: string): Promise<FileResult> => {
      await writeFile(join(source.inbox, name), text);
      return pushFile(deps, source, join(source.inbox, name));
    };
    expect((await reportOf(await push('t1.csv', csv('2026-11-23T01:00', -1)))).rows).toMatchObject({ read: 24, sent: 24 });
    debug.length = 0;
    const r2 = await reportOf(await push('t2.csv', csv('2026-11-24T01:00', 5)));
    expect(r2.rows).toMatchObject({ read: 24, sent: 1, unchanged: 23 });
    expect(debug).toContain('compared line by line');
    expect(debug).not.toContain('compared by content');
  });

  it('in line mode counts, sends and brakes on rows whose other cells do not convert as content mode does', async () => {
    // A new key whose price does not convert; a known key moved a hundredfold, with a second row of it that does not
    // convert: content mode compares neither unconvertible row, so it counts no new key and holds the file for the move.
    const day1 = Array.from({ length: 40 }, (_, i): [string, number, string] => [`V${i}`, i % 2, `${i}.50`]);
    const day2 = [...day1.map(([item, store, price]): [string, number, string] => [item, store, item === 'V3' ? '350.00' : price]), ['VNEW', 0, 'abc'] as [string, number, string], ['V3', 1, 'abc'] as [string, number, string]];
    const outcomes: unknown[] = [];
    for (const splitBytes of [undefined, 1]) {
      const debug: string[] = [];
      const logger = Object.assign(Object.create(h.deps.logger) as PushDeps['logger'], { debug: (_: unknown, message: string) => debug.push(message) });
      const deps: PushDeps = { ...h.deps, logger, ...(splitBytes === undefined ? {} : { splitBytes }) };
      const source = await h.source('product_store', { delta: true, brakes: { max_price_change_pct: 500, max_changed_share: false }, batch_size: 5 });
      const push = async (name: string, csv: string): Promise<FileResult> => {
        await writeFile(join(source.inbox, name), csv);
        return pushFile(deps, source, join(source.inbox, name));
      };
      expect((await push('v1.csv', storeCsv(day1))).outcome).toBe('done');
      const held = await push('v2.csv', storeCsv(day2));
      if (held.outcome !== 'held') throw new Error(`expected held, got ${held.outcome}`);
      const preview = JSON.parse(await readFile(held.previewPath, 'utf8')) as Record<string, unknown>;
      outcomes.push({ rows: preview.rows, brakes: preview.brakes, moves: preview.largest_price_moves });
      expect(debug.includes('compared line by line')).toBe(splitBytes !== undefined);
    }
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[0]).toMatchObject({ rows: { changed: 1, new: 0 } });
  });

  it('holds a file merged in two halves of the key range on two threads with the preview of the one-thread merge', async () => {
    // Not a snapshot source: the second thread merges half the keys itself (state-merge.ts). Price moves in both
    // halves of the file and of the key range, ties among them.
    const brakes = { max_price_change_pct: 50, max_changed_share: false };
    const rows = (n: number, price: (i: number) => string) => storeCsv(Array.from({ length: n }, (_, i): [string, number, string] => [`Q${i}`, i % 2, price(i)]));
    const day1 = rows(60, (i) => `${10 + (i % 5)}.00`);
    const day2 = rows(60, (i) => (i % 4 === 1 ? `${(10 + (i % 5)) * 3}.00` : i === 40 ? '1.00' : `${10 + (i % 5)}.00`));
    const previews: unknown[] = [];
    for (const [name, splitBytes] of [['one', undefined], ['two', 1]] as const) {
      const source = await h.source('product_store', { delta: true, brakes, batch_size: 7 });
      const deps: PushDeps = splitBytes === undefined ? h.deps : { ...h.deps, splitBytes };
      const push = async (file: string, csv: string): Promise<FileResult> => {
        await writeFile(join(source.inbox, file), csv);
        return pushFile(deps, source, join(source.inbox, file));
      };
      expect((await push(`${name}-q1.csv`, day1)).outcome).toBe('done');
      const held = await push(`${name}-q2.csv`, day2);
      if (held.outcome !== 'held') throw new Error(`expected held, got ${held.outcome}`);
      const preview = JSON.parse(await readFile(held.previewPath, 'utf8')) as Record<string, unknown>;
      previews.push({ rows: preview.rows, brakes: preview.brakes, moves: preview.largest_price_moves });
    }
    expect(previews[1]).toEqual(previews[0]);
    expect(previews[0]).toMatchObject({ rows: { known_keys: 60, changed: 16, unchanged: 44 } });
    expect((previews[0] as { moves: unknown[] }).moves).toHaveLength(16);
  });

  it('holds a file read in two halves, keys read by the second thread, with the preview of the one-thread pass', async () => {
    // The same files through two snapshot sources: one compares on one thread, the other in two halves (its keys
    // read by the second half's thread on SQLite). The held previews (price moves, missing keys, counts) are equal.
    const brakes = { max_price_change_pct: 50, max_missing_share: 0.5, max_changed_share: false };
    const rows = (n: number, price: (i: number) => string) => storeCsv(Array.from({ length: n }, (_, i): [string, number, string] => [`P${i}`, i % 2, price(i)]));
    const day1 = rows(40, (i) => `${10 + i}.00`);
    // Three prices move by more than 50 % (in both halves), three keys are gone, one is new.
    const day2 = rows(37, (i) => (i === 3 || i === 30 ? `${(10 + i) * 3}.00` : i === 20 ? '1.00' : `${10 + i}.00`)).replace('P36,', 'P36x,');
    const previews: unknown[] = [];
    for (const [name, splitBytes] of [['one', undefined], ['two', 1]] as const) {
      const source = await h.source('product_store', { delta: true, snapshot: true, brakes, batch_size: 4 });
      const deps: PushDeps = splitBytes === undefined ? h.deps : { ...h.deps, splitBytes };
      const push = async (file: string, csv: string): Promise<FileResult> => {
        await writeFile(join(source.inbox, file), csv);
        return pushFile(deps, source, join(source.inbox, file));
      };
      expect((await push(`${name}-1.csv`, day1)).outcome).toBe('done');
      const held = await push(`${name}-2.csv`, day2);
      if (held.outcome !== 'held') throw new Error(`expected held, got ${held.outcome}`);
      const preview = JSON.parse(await readFile(held.previewPath, 'utf8')) as Record<string, unknown>;
      previews.push({ rows: preview.rows, brakes: preview.brakes, moves: preview.largest_price_moves, missing: preview.first_missing_keys });
    }
    expect(previews[1]).toEqual(previews[0]);
    expect(previews[0]).toMatchObject({
      rows: { known_keys: 40, changed: 3, new: 1, missing: 4, unchanged: 33 },
      moves: [
        { line: 22, before: '30', after: '1', move_pct: 2900 },
        { line: 5, before: '13', after: '39', move_pct: 200 },
        { line: 32, before: '40', after: '120', move_pct: 200 },
      ],
    });
  });

  it('lists a held file as held, never as failed, with why and the command that releases it', async () => {
    const source = await h.source('product_store', { delta: true, brakes: { max_price_change_pct: 50, max_changed_share: false } });
    const push = async (file: string, csv: string): Promise<FileResult> => {
      await writeFile(join(source.inbox, file), csv);
      return pushFile(h.deps, source, join(source.inbox, file));
    };
    expect((await push('h1.csv', storeCsv([['H', 0, '1.00']]))).outcome).toBe('done');
    const held = await push('h2.csv', storeCsv([['H', 0, '9.00']]));
    if (held.outcome !== 'held') throw new Error(`expected held, got ${held.outcome}`);
    const [listed] = await listFiles(h.db, { source: source.name, limit: 1 });
    expect(listed).toMatchObject({ id: held.file.id, status: 'held' });
    expect(listed?.error_message).toMatch(/^held by the brakes: /);
    // The console adds the release command of a file still held (status's held_files), and shows it in the lists.
    const command = (await heldFileList(h.db)).find((f) => f.id === held.file.id)?.release_command ?? null;
    expect(command).toBe(`pricing-agent files release ${held.file.id}`);
    const table = filesTable([{ ...listed!, report_path: null, rejects_path: null, release_command: command }], {}, '').toString();
    expect(table).toContain('<span class="pill busy">held</span>');
    expect(table).not.toContain('pill bad');
    expect(table).toContain(`<code class="release">pricing-agent files release ${held.file.id}</code>`);
    // Its page: held, with the brakes, its preview (counts by kind, the largest price moves, the missing keys) and the command.
    const detail = await showFile(h.db, held.file.id);
    const page = fileBody({ ...detail!, report_text: null, columns: null, held: await heldDetail(h.db, held.file.id) }, {}).toString();
    expect(page).toMatch(/^<h1>h2\.csv <span class="pill busy">held<\/span>/);
    expect(page).toContain('<h2>Held by the brakes</h2>');
    expect(page).toMatch(/<li>[^<]*50 %[^<]*<\/li>/);
    expect(page).toContain('<dt>Changed</dt><dd>1</dd>');
    expect(page).toMatch(/<td class="num" data-label="Before"><span class="v">1<\/span><\/td><td class="num" data-label="After"><span class="v">9<\/span><\/td><td class="num" data-label="Move"><span class="v">800 %<\/span>/);
    expect(page).toContain(`<code class="release">pricing-agent files release ${held.file.id}</code>`);
    expect(page).toContain('Finished <span class="pill busy">held</span>'); // never "failed", as the ledger has it
    // The overview says so first: an alert with each held file's command, whatever the later files.
    const report = { api_key: { state: 'works' }, daemon: { state: 'ready', reasons: [] }, api_wait: null, database: { state: 'ok' }, held_files: (await heldFileList(h.db)).filter((f) => f.source === source.name) };
    const overview = alerts(report as unknown as StatusReport).toString();
    expect(overview).toContain('1 file(s) held by the brakes: nothing of them was sent.');
    expect(overview).toContain(`<code class="release">pricing-agent files release ${held.file.id}</code>`);
    // A preview that is not the agent's (too large, another shape, a link) is not read: the page says so, still held.
    const previewPath = (await heldFileList(h.db)).find((f) => f.id === held.file.id)?.preview_path ?? '';
    const original = await readFile(previewPath, 'utf8');
    for (const [what, write] of [
      ['too large', () => writeFile(previewPath, `{"rows":{},"pad":"${'x'.repeat(1024 * 1024)}"}`)],
      ['another shape', () => writeFile(previewPath, '{"rows":null}')],
      ['a link', async () => { await rm(previewPath, { force: true }); await symlink(join(source.inbox, 'h1.csv'), previewPath); }],
    ] as const) {
      await write();
      const shown = await heldDetail(h.db, held.file.id);
      expect([what, shown?.preview, shown?.release_command]).toEqual([what, null, command]);
      expect(fileBody({ ...detail!, report_text: null, columns: null, held: shown }, {}).toString(), what).toContain('Its preview could not be read.');
      await rm(previewPath, { force: true });
    }
    await writeFile(previewPath, original);
    // A file that is not held has no held section.
    const done = await push('h3.csv', storeCsv([['H', 0, '1.00']]));
    if (done.outcome !== 'done') throw new Error(`expected done, got ${done.outcome}`);
    expect(await heldDetail(h.db, done.file.id)).toBeNull();
  });
});
