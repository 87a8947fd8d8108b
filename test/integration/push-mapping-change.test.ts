/**
 * Issue 28 point 6: a mapping fix is a new push. The same content pushed again after its source's mapping changed is
 * sent again, and its report says why; under the same mapping it stays a duplicate. The same content dropped into
 * another source's inbox is a duplicate whose report names the file and source that sent it and how to force it.
 * Real pushes against the sandbox, the ledger in SQLite.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SourceSchema } from '../../src/config/source-schema.ts';
import { pushFile, type PushSource } from '../../src/ingest/file/push-file.ts';
import { pushHarness } from '../support/push-harness.ts';
import { openForFile } from '../support/open-for-file.ts';
import { readReport, reportOf } from '../fixtures/push/push-report.ts';

const h = openForFile(() => pushHarness());

/** The source `name` (its own inbox) with these options: the same source, its mapping edited in between. */
async function sourceNamed(name: string, options: Record<string, unknown>): Promise<PushSource> {
  const inbox = join(h.dir, 'inbox', name);
  await mkdir(inbox, { recursive: true });
  const config = SourceSchema.parse({ name, entity: 'product_store', path: inbox, ...options });
  return { name, entity: 'product_store', mode: config.mode, inbox, batchSize: config.batch_size, read: config };
}

async function push(source: PushSource, file: string, content: string) {
  const path = join(source.inbox, file);
  await writeFile(path, content);
  return pushFile(h.deps, source, path);
}

const price = (item: string) => [...h.sandbox.control.world.productStore.table.rows()].find((r) => r.item_id === item)?.current_price;

describe('the same content under a changed mapping', () => {
  it('is sent again after the mapping changed, and stays a duplicate under the same mapping', async () => {
    const store = h.sandbox.control.state().stores[0];
    const csv = `Artikel,Filiale,Preis,Aktionspreis\nMAP-1,${store},2.50,1.99\nMAP-2,${store},3.50,2.99\n`;
    const wrong = await sourceNamed('remap', { columns: { item_id: 'Artikel', store_id: 'Filiale', current_price: 'Aktionspreis' } });
    expect((await reportOf(await push(wrong, 'prices.csv', csv))).rows).toMatchObject({ sent: 2, accepted: 2 });
    expect(price('MAP-1')).toBe('1.99');

    const again = await push(wrong, 'prices.csv', csv);
    expect(again.outcome).toBe('duplicate');

    const fixed = await sourceNamed('remap', { columns: { item_id: 'Artikel', store_id: 'Filiale', current_price: 'Preis' } });
    const report = await reportOf(await push(fixed, 'prices.csv', csv));
    expect(report.rows).toMatchObject({ read: 2, sent: 2, accepted: 2 });
    expect(report.warnings).toContainEqual(expect.stringMatching(/^mapping changed since the last push: the same content was sent as "prices\.csv" \(file #\d+/));
    expect(price('MAP-1')).toBe('2.50');
    expect(price('MAP-2')).toBe('3.50');

    // Pushed once more under the fixed mapping: nothing changed since, a duplicate again.
    expect((await push(fixed, 'prices.csv', csv)).outcome).toBe('duplicate');
  });

  it("in another source's inbox, names the file and source that sent it and how to force it", async () => {
    const store = h.sandbox.control.state().stores[0];
    const csv = `item_id,store_id,current_price\nOTHER-1,${store},4.20\n`;
    const first = await sourceNamed('shop-a', {});
    const sent = await reportOf(await push(first, 'shop-a-prices.csv', csv));
    expect(sent.rows).toMatchObject({ accepted: 1 });

    const second = await sourceNamed('shop-b', {});
    const result = await push(second, 'copy.csv', csv);
    expect(result.outcome).toBe('duplicate');
    if (result.outcome !== 'duplicate') return;
    const report = await readReport(result.reportPath);
    expect(report.duplicate_of).toMatchObject({ file: 'shop-a-prices.csv', source: 'shop-a' });
    const note = report.warnings.find((w) => w.startsWith('the same content was already sent by source "shop-a" as "shop-a-prices.csv"'));
    expect(note).toBeDefined();
    expect(note).toContain(`pricing-agent push "${result.file.final_path ?? ''}" --source shop-b --force`);
  });
});
