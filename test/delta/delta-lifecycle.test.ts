/**
 * Delta push over a source's life, against the sandbox over HTTP and a real SQLite state: a push stopped after its
 * first batch resumes without sending an accepted row twice, the brakes hold a file with a preview and let it go once
 * released, a snapshot names its missing keys, a mapping change and delta.full_every send every row, and the dry run
 * gives the figures a push would.
 */
import { mkdtemp, readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/client.ts';
import { dryRun } from '../../src/ingest/operations/dry-run.ts';
import { processClaimed, pushFile, type FileResult, type PushSource } from '../../src/ingest/file/push-file.ts';
import { compileSource } from '../../src/ingest/read/index.ts';
import { heldFileList } from '../../src/status/held-files.ts';
import { deltaFile, releaseHeld } from '../../src/store/delta-state.ts';
import { fileCounts } from '../../src/ingest/file/row-fate.ts';
import { committedSpans } from '../../src/store/push-ledger.ts';
import { resultJson, resultText } from '../../src/cli/commands/push-summary.ts';
import { showText } from '../../src/cli/commands/files-text.ts';
import { showFile } from '../../src/status/file-list.ts';
import { upsertMirrorPage } from '../../src/store/mirrors.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { pushHarness, type PushHarness } from '../support/push-harness.ts';

const DAY_MS = 86_400_000;
const clock = new ManualClock(Date.parse('2026-11-20T02:00:00Z'));
let h: PushHarness;
let stores: readonly string[];
beforeAll(async () => {
  h = await pushHarness({ clock, maxInFlight: 1 });
  stores = h.sandbox.control.state().stores;
});
afterAll(() => h.close());

type Report = { rows: Record<string, number>; delta: Record<string, unknown> | null };

async function reportOf(result: FileResult): Promise<Report> {
  if (result.outcome !== 'done') throw new Error(`expected done, got ${JSON.stringify(result)}`);
  return JSON.parse(await readFile(result.reportPath, 'utf8')) as Report;
}

function csv(rows: readonly [string, number, string][], header = 'item_id,store_id,current_price'): string {
  return `${header}\n${rows.map(([item, store, price]) => `${item},${stores[store]},${price}`).join('\n')}\n`;
}

/** `csv` written into the source's inbox as `name`; its path. */
async function dropped(source: PushSource, name: string, text: string): Promise<string> {
  const file = join(source.inbox, name);
  await writeFile(file, text);
  return file;
}

/** A client that counts the product-store rows it sends and calls `after` once a bulk request was answered. */
function countingClient(after: (calls: number) => void = () => undefined): { client: ApiClient; rows: () => number } {
  let rows = 0;
  let calls = 0;
  const productStore = {
    ...h.client.productStore,
    bulk: async (items: Parameters<ApiClient['productStore']['bulk']>[0], options?: Parameters<ApiClient['productStore']['bulk']>[1]) => {
      rows += items.length;
      const answer = await h.client.productStore.bulk(items, options);
      calls += 1;
      after(calls);
      return answer;
    },
  };
  return { client: Object.assign(Object.create(h.client) as ApiClient, { productStore }), rows: () => rows };
}

/** The first export: R1 to R6 at the first store, priced 1.00 to 6.00. */
const DAY1 = Array.from({ length: 6 }, (_, i): [string, number, string] => [`R${i + 1}`, 0, `${i + 1}.00`]);

describe('delta push over a source life', () => {
  it('resumes a push stopped after its first batch without sending an accepted row twice', async () => {
    // On one thread by content; then in two halves in line mode, where the first batch's rows pass as sent before by
    // their line hash under this file's id (16 rows: few enough undecided ones for line mode to hold).
    const debug: string[] = [];
    const logger = Object.assign(Object.create(h.deps.logger) as typeof h.deps.logger, { debug: (_: unknown, message: string) => debug.push(message) });
    for (const [splitBytes, rows] of [[undefined, 6], [1, 16]] as const) {
      const deps = splitBytes === undefined ? h.deps : { ...h.deps, logger, splitBytes };
      const source = await h.source('product_store', { delta: true, batch_size: 2, brakes: false });
      const day1 = Array.from({ length: rows }, (_, i): [string, number, string] => [`R${i + 1}`, 0, `${i + 1}.00`]);
      await reportOf(await pushFile(deps, source, await dropped(source, 'day1.csv', csv(day1))));
      // Day 2: four prices changed, the others unchanged. The push is stopped once its first batch was answered.
      const day2 = day1.map(([item, store, price], i): [string, number, string] => [item, store, i < 4 ? `${i + 10}.00` : price]);
      const stop = new AbortController();
      const first = countingClient(() => stop.abort(new Error('stopped for the test')));
      const stopped = await pushFile({ ...deps, client: first.client, signal: stop.signal }, source, await dropped(source, 'day2.csv', csv(day2)));
      expect(stopped.outcome).toBe('deferred');
      expect(first.rows()).toBe(2);
      const second = countingClient();
      if (stopped.outcome !== 'deferred') return;
      const resumed = await processClaimed({ ...deps, client: second.client }, source, stopped.file.id);
      expect(second.rows()).toBe(2); // the two changed rows not sent yet; the first batch's rows are not sent again
      const r = await reportOf(resumed);
      expect(r.rows).toMatchObject({ read: rows, sent: 4, accepted: 4, unchanged: rows - 4, rejected: 0 });
    }
    expect(debug).not.toContain('compared by content');
    expect(debug).not.toContain('compared on one thread');
  });

  it('commits batches whose lines cover every row they counted unchanged, runs of unread lines included', async () => {
    // What a resumed file trusts: a row within a committed batch's lines is not counted again (delta-plan.ts). The send
    // pass leaves unchanged lines unread past its first piece (a mebibyte), and counts each run of them at once: here the
    // last batch holds nothing but such a run, after the one changed row near the file's end.
    const source = await h.source('product_store', { delta: true, batch_size: 1000, brakes: false });
    const rows = Array.from({ length: 12_000 }, (_, i): [string, number, string] => [`ITEM-${i}-${'x'.repeat(80)}`, 0, `${(i % 90) + 1}.00`]);
    await reportOf(await pushFile(h.deps, source, await dropped(source, 'day1.csv', csv(rows))));
    const day2 = rows.map(([item, store, price], i): [string, number, string] => [item, store, i === 11_000 ? '99.99' : price]);
    const done = await pushFile(h.deps, { ...source, batchSize: 1 }, await dropped(source, 'day2.csv', csv(day2)));
    expect((await reportOf(done)).rows).toMatchObject({ read: 12_000, sent: 1, unchanged: 11_999 });
    if (done.outcome !== 'done') return;
    expect(await committedSpans(h.deps.db, done.file.id)).toEqual([[2, 12_001]]);
  });

  it('resumes a stopped full send after another file of its source finished, without sending or counting a row twice', async () => {
    // The chaos suite's case: a source's first file (sent in full) stopped after its first batch; an older file of the
    // source, deferred before, finishes first with the same keys and remembers its own file id for them.
    const source = await h.source('product_store', { delta: true, batch_size: 2, brakes: false });
    const stop = new AbortController();
    const first = countingClient(() => stop.abort(new Error('stopped for the test')));
    const { writeFile } = await import('node:fs/promises');
    const file = join(source.inbox, 'first.csv');
    await writeFile(file, csv(DAY1));
    const stopped = await pushFile({ ...h.deps, client: first.client, signal: stop.signal }, source, file);
    expect(stopped.outcome).toBe('deferred');
    expect(first.rows()).toBe(2);
    if (stopped.outcome !== 'deferred') return;
    // Its prices of the first two rows differ: their keys are then remembered under its own file id.
    const older = DAY1.map(([item, store, price], i): [string, number, string] => [item, store, i < 2 ? `${i + 20}.00` : price]);
    const other = await reportOf(await h.push(source, 'other.csv', csv(older)));
    expect(other.rows).toMatchObject({ read: 6, sent: 6, unchanged: 0 });
    const second = countingClient();
    const resumed = await processClaimed({ ...h.deps, client: second.client }, source, stopped.file.id);
    expect(second.rows()).toBe(4); // the first batch's rows are not sent again
    const r = await reportOf(resumed);
    expect(r.rows).toMatchObject({ read: 6, sent: 6, accepted: 6, unchanged: 0, rejected: 0 });
  });

  it('holds a file that moves a price by more than max_price_change_pct, with a preview, and sends it once released', async () => {
    const source = await h.source('product_store', { delta: true });
    await reportOf(await h.push(source, 'day1.csv', csv(DAY1)));
    const before = h.sandbox.control.state().requests.total;
    // A decimal point lost in the export: 2.00 becomes 200.
    const wrong = DAY1.map(([item, store, price]): [string, number, string] => [item, store, item === 'R2' ? '200' : price]);
    const held = await h.push(source, 'day2.csv', csv(wrong));
    expect(held.outcome).toBe('held');
    if (held.outcome !== 'held') return;
    expect(h.sandbox.control.state().requests.total).toBe(before); // nothing sent
    expect(held.brakes[0]).toMatch(/a price would move by 9900 %/);
    const preview = JSON.parse(await readFile(held.previewPath, 'utf8')) as Record<string, unknown>;
    expect(preview).toMatchObject({
      file: 'day2.csv',
      rows: { compared: 6, known_keys: 6, unchanged: 5, changed: 1, new: 0 },
      largest_price_moves: [{ line: 3, key: { item_id: 'R2', store_id: stores[0] }, before: '2', after: '200', move_pct: 9900 }],
    });
    expect(await readdir(join(source.inbox, 'held'))).toEqual(['day2.csv', 'day2.csv.preview.json']);
    const listed = (await heldFileList(h.db)).filter((f) => f.source === source.name);
    expect(listed).toEqual([expect.objectContaining({ id: held.file.id, source: source.name, name: 'day2.csv', held_path: held.heldPath })]);
    expect(listed[0]?.release_command).toBe(`pricing-agent files release ${held.file.id}`);

    // Released (what `files release` records), back in the inbox: sent without the brakes.
    await releaseHeld(h.db, held.file.id, new Date(clock.now()).toISOString());
    await rename(held.heldPath, join(source.inbox, 'day2.csv'));
    const sent = await reportOf(await pushFile(h.deps, source, join(source.inbox, 'day2.csv')));
    expect(sent.rows).toMatchObject({ read: 6, sent: 1, unchanged: 5 });
    expect((await heldFileList(h.db)).filter((f) => f.source === source.name)).toEqual([]);
    // The release is used up: the same content again is compared (all unchanged now), not braked.
    await reportOf(await h.push(source, 'day3.csv', csv(wrong)));
  });

  it('holds a file that changes more than max_changed_share of the known keys; brakes: false sends it', async () => {
    const source = await h.source('product_store', { delta: true, brakes: { max_changed_share: 0.5 } });
    await reportOf(await h.push(source, 'day1.csv', csv(DAY1)));
    const most = DAY1.map(([item, store, price], i): [string, number, string] => [item, store, i < 4 ? `${price}1` : price]);
    const held = await h.push(source, 'day2.csv', csv(most));
    expect(held.outcome).toBe('held');
    if (held.outcome === 'held') expect(held.brakes).toEqual(['4 known keys would change: 66.7 % of the 6 known keys (limit 50.0 %)']);
    const free = await h.source('product_store', { delta: true, brakes: false });
    await reportOf(await h.push(free, 'day1.csv', csv(DAY1)));
    expect((await reportOf(await h.push(free, 'day2.csv', csv(most)))).rows).toMatchObject({ sent: 4, unchanged: 2 });
  });

  it('names the keys a snapshot lacks in <name>.missing.csv, with the ids the API gave them', async () => {
    const source = await h.source('product_store', { delta: true, snapshot: true });
    await reportOf(await h.push(source, 'day1.csv', csv(DAY1.slice(0, 3))));
    const result = await h.push(source, 'day2.csv', csv(DAY1.slice(0, 2)));
    const r = await reportOf(result);
    expect(r.rows).toMatchObject({ read: 2, sent: 0, unchanged: 2 });
    expect(r.delta).toMatchObject({ missing: 1, known_keys: 3 });
    const missing = await readFile(String(r.delta?.['missing_file']), 'utf8');
    const [header, row, ...rest] = missing.split('\r\n');
    expect(header).toBe('item_id,store_id,id');
    expect(row).toMatch(new RegExp(`^R3,${stores[0]},[0-9a-f-]{36}$`));
    expect(rest).toEqual(['']);
  });

  it('missing: delete deletes the keys a snapshot lacks through the API, with the ids from the bulk results', async () => {
    const source = await h.source('product_store', { delta: true, snapshot: true, missing: 'delete', brakes: { max_missing_share: 0.5 } });
    const keys = () => h.sandbox.control.state({ keys: true }).product_store.keys?.filter((k) => k.item_id.startsWith('D')) ?? [];
    const rows: [string, number, string][] = [['D1', 0, '1.00'], ['D2', 0, '2.00'], ['D3', 1, '3.00']];
    await reportOf(await h.push(source, 'day1.csv', csv(rows)));
    expect(keys()).toHaveLength(3);
    const r = await reportOf(await h.push(source, 'day2.csv', csv(rows.slice(0, 2))));
    expect(r.delta).toMatchObject({ missing: 1, deleted: 1 });
    expect(keys()).toEqual([{ item_id: 'D1', store_id: stores[0] }, { item_id: 'D2', store_id: stores[0] }]);
    // Forgotten once deleted: the next snapshot misses nothing.
    expect((await reportOf(await h.push(source, 'day3.csv', csv(rows.slice(0, 2))))).delta).toMatchObject({ missing: 0, deleted: 0 });
    // Deleting more than max_missing_share of the known keys holds the file.
    const held = await h.push(source, 'day4.csv', csv(rows.slice(0, 0)).concat(`D9,${stores[0]},9.00\n`));
    expect(held.outcome).toBe('held');
    if (held.outcome !== 'held') return;
    expect(held.brakes.join()).toMatch(/2 known keys are missing and would be deleted: 100.0 %/);
    // The preview names the first missing keys, with the ids the API gave them.
    const preview = JSON.parse(await readFile(held.previewPath, 'utf8')) as { first_missing_keys: { key: Record<string, string>; id: string }[] };
    expect(preview.first_missing_keys.map((m) => m.key.item_id).sort()).toEqual(['D1', 'D2']);
    expect(preview.first_missing_keys.every((m) => /^[0-9a-f-]{36}$/.test(m.id))).toBe(true);
    expect(keys()).toHaveLength(2);
  });

  it('missing: delete deletes nothing from a snapshot with rejected rows: a rejected row\'s key is not a missing key', async () => {
    const source = await h.source('product_store', { delta: true, snapshot: true, missing: 'delete', brakes: { max_missing_share: 0.9 } });
    const keys = () => (h.sandbox.control.state({ keys: true }).product_store.keys ?? []).filter((k) => k.item_id.startsWith('E')).map((k) => k.item_id).sort();
    await reportOf(await h.push(source, 'day1.csv', csv([['E1', 0, '1.00'], ['E2', 0, '2.00'], ['E3', 0, '3.00']])));
    // E2's price is mistyped (a letter O), E3 is really gone: E2 is rejected, and nothing is deleted.
    const typo = await reportOf(await h.push(source, 'day2.csv', csv([['E1', 0, '1.00'], ['E2', 0, '2.OO']])));
    expect(typo.rows).toMatchObject({ rejected: 1 });
    expect(typo.delta).toMatchObject({ deleted: 0 });
    expect(JSON.stringify(typo)).toMatch(/missing: delete deleted nothing: 1 row\(s\) of the file were rejected/);
    expect(keys()).toEqual(['E1', 'E2', 'E3']);
    // The file dropped again with the row fixed: only E3 is deleted.
    const fixed = await reportOf(await h.push(source, 'day3.csv', csv([['E1', 0, '1.00'], ['E2', 0, '2.00']])));
    expect(fixed.delta).toMatchObject({ missing: 1, deleted: 1 });
    expect(keys()).toEqual(['E1', 'E2']);
  });

  it('puts right a row changed on the platform (seen by the mirror): sent again with the next file, unchanged in it', async () => {
    const source = await h.source('product_store', { delta: true });
    const rows: [string, number, string][] = [['M1', 0, '1.00'], ['M2', 0, '2.00']];
    await reportOf(await h.push(source, 'day1.csv', csv(rows)));
    // Someone changes M1's price in the platform's UI; the mirror lists it; M2 comes back as the agent sent it.
    const listed: { id: string; item_id: string }[] = [];
    for await (const page of h.client.productStore.list({ store_id: stores[0] })) listed.push(...page.items);
    const m1 = listed.find((r) => r.item_id === 'M1');
    const m2 = listed.find((r) => r.item_id === 'M2');
    if (!m1 || !m2) throw new Error('M1 and M2 are not on the platform');
    const changed = await h.client.productStore.patch(m1.id, { current_price: '9.99' });
    await upsertMirrorPage(h.db, 'product_store', [changed, m2 as typeof changed], null);
    const r = await reportOf(await h.push(source, 'day2.csv', csv(rows)));
    expect(r.rows).toMatchObject({ read: 2, sent: 1, unchanged: 1 });
    expect(r.delta).toMatchObject({ changed_on_platform: 1, changed: 0 });
    expect((await h.client.productStore.get(m1.id))['current_price']).toBe('1.00');
    // Put right: the next file leaves it alone again.
    expect((await reportOf(await h.push(source, 'day3.csv', csv(rows)))).rows).toMatchObject({ sent: 0, unchanged: 2 });
  });

  it('accounts for every row it sends by why: an export pushed again unchanged sends only what the platform changed and what the API refused', async () => {
    const source = await h.source('product_store', { delta: true });
    // A nightly export: twelve keys, three of them repeated (the later row wins, the earlier one differs), and two
    // rows for a store the platform does not know (valid locally, refused by the API: unknown_store).
    const unknownStore = '00000000-0000-4000-8000-00000000abcd';
    const rows: [string, number, string][] = [];
    for (let i = 1; i <= 12; i++) rows.push([`N${i}`, i % 2, `${i}.00`]);
    rows.splice(2, 0, ['N1', 1, '0.50'], ['N2', 0, '0.60'], ['N3', 1, '0.70']);
    const text = `${csv(rows)}R1,${unknownStore},1.00\nR2,${unknownStore},2.00\n`;
    const first = await reportOf(await h.push(source, 'night1.csv', text));
    expect(first.rows).toMatchObject({ read: 17, sent: 14, accepted: 12, rejected_by_api: 2, superseded: 3 });
    expect(first.delta).toMatchObject({ mode: 'full', new: 14, refused_before: 0, forced: 0 });

    // Someone changes N5's price in the platform's UI; the mirror lists it.
    const listed: { id: string; item_id: string }[] = [];
    for await (const page of h.client.productStore.list({ store_id: stores[1] })) listed.push(...page.items);
    const n5 = listed.find((r) => r.item_id === 'N5');
    if (!n5) throw new Error('N5 is not on the platform');
    await upsertMirrorPage(h.db, 'product_store', [await h.client.productStore.patch(n5.id, { current_price: '9.99' })], null);

    // The same export the next night: N5 put right and the two refused rows tried again; the repeated keys, whose
    // winning rows are as the API holds them, are unchanged, their earlier rows superseded and not sent.
    const result = await h.push(source, 'night2.csv', text);
    const second = await reportOf(result);
    expect(second.rows).toMatchObject({ read: 17, sent: 3, accepted: 1, rejected_by_api: 2, unchanged: 11, superseded: 3 });
    const reasons = { changed: 0, new: 0, changed_on_platform: 1, refused_before: 2, remapped: 0, forced: 0 };
    expect(second.delta).toMatchObject(reasons);
    const sum = Object.keys(reasons).reduce((total, k) => total + Number(second.delta?.[k]), 0);
    expect(sum).toBe(second.rows['sent']);
    expect((await h.client.productStore.get(n5.id))['current_price']).toBe('5.00');
    if (result.outcome !== 'done') throw new Error('not done');
    const view = { result, counts: await fileCounts(h.db, result.file.id), delta: (await deltaFile(h.db, result.file.id)) ?? null };
    expect(resultText(view)).toContain('  sent because: 1 changed on the platform, 2 refused by the API before\n');
    expect(resultJson(view)['sent_because']).toEqual(reasons);
    expect(showText((await showFile(h.db, result.file.id))!, new Date())).toMatch(/Sent because +1 changed on the platform, 2 refused by the API before/);

    // A full send sends the unchanged rows too, and says so; the refused rows stay refused.
    const full = await reportOf(await h.push(source, 'night3.csv', text, { full: true }));
    expect(full.rows).toMatchObject({ read: 17, sent: 14, accepted: 12, rejected_by_api: 2, superseded: 3 });
    expect(full.delta).toMatchObject({ mode: 'full', changed: 0, new: 0, changed_on_platform: 0, refused_before: 2, forced: 12 });
  });

  it('sends every row once when the mapping changes, and at least every delta.full_every', async () => {
    const source = await h.source('product_store', { delta: { full_every: '7d' } });
    const first = await reportOf(await h.push(source, 'day1.csv', csv(DAY1)));
    expect(first.delta).toMatchObject({ mode: 'full', reason: 'first file of the source' });
    await clock.advance(DAY_MS);
    expect((await reportOf(await h.push(source, 'day2.csv', csv(DAY1)))).rows).toMatchObject({ sent: 0, unchanged: 6 });
    // The same source with a default added: another mapping, every row sent once (not braked: a person did it).
    const remapped: PushSource = { ...source, ...(await h.source('product_store', { delta: true, defaults: { currency: 'EUR' } })), name: source.name, inbox: source.inbox };
    const r3 = await reportOf(await h.push(remapped, 'day3.csv', csv(DAY1)));
    expect(r3.rows).toMatchObject({ sent: 6, unchanged: 0 });
    expect(r3.delta).toMatchObject({ mode: 'delta', reason: 'mapping changed: every row is sent once', remapped: 6 });
    await clock.advance(DAY_MS);
    expect((await reportOf(await h.push(remapped, 'day4.csv', csv(DAY1)))).rows).toMatchObject({ sent: 0, unchanged: 6 });
    // Seven days after the first file (the last full send): every row is sent.
    await clock.advance(6 * DAY_MS);
    const r5 = await reportOf(await h.push(remapped, 'day5.csv', csv(DAY1)));
    expect(r5.rows).toMatchObject({ sent: 6, unchanged: 0 });
    expect(r5.delta?.['mode']).toBe('full');
    expect(r5.delta?.['reason']).toMatch(/^delta\.full_every \(7 d\)/);
    await clock.advance(DAY_MS);
    expect((await reportOf(await h.push(remapped, 'day6.csv', csv(DAY1)))).rows).toMatchObject({ sent: 0, unchanged: 6 });
    const forced = await reportOf(await h.push(remapped, 'day7.csv', csv(DAY1), { full: true }));
    expect(forced.delta).toMatchObject({ mode: 'full', reason: 'push --full' });
    expect(forced.rows).toMatchObject({ sent: 6 });
  });

  it('dry run: the figures a push would give, without sending or writing anything', async () => {
    const source = await h.source('product_store', { delta: true });
    await reportOf(await h.push(source, 'day1.csv', csv(DAY1)));
    const day2 = csv([...DAY1.slice(0, 5), ['R6', 0, '6.50'], ['R7', 0, '7.00']]);
    const dir = await mkdtemp(join(tmpdir(), 'pa-dry-'));
    const path = join(dir, 'day2.csv');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(path, day2);
    const before = h.sandbox.control.state().requests.total;
    const read = source.read as Parameters<typeof compileSource>[0];
    const result = await dryRun({
      file: path,
      read: compileSource(read),
      entity: 'product_store',
      mode: 'bulk',
      batchSize: 1000,
      rejectsPath: join(dir, 'rejects.csv'),
      delta: { db: h.db, source: { name: source.name, entity: 'product_store', delta: source.delta!, options: source.options ?? {}, duplicateKeys: 'last' }, full: false, scratchDir: join(dir, 'scratch'), now: clock.now() },
    });
    expect(result.wouldSend).toBe(2);
    expect(result.delta?.comparison.counts).toMatchObject({ rows: 7, unchanged: 5, changed: 1, newKeys: 1, known: 6 });
    expect(h.sandbox.control.state().requests.total).toBe(before);
  });
});
