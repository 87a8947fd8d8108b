/**
 * Every entity in both modes against the sandbox over real HTTP, from the files retailers actually produce: a German
 * Windows-1252 export with semicolons, decimal commas and its own headers, UTF-8 with BOM and CRLF (quoted commas and
 * line breaks, a custom column), UTF-16LE with tabs. The sandbox's records are checked field by field, and every
 * report reconciles.
 *
 * Import jobs run at the sandbox's instant pace; the agent's poll waits go through a ManualClock that the test drives,
 * so nothing sleeps.
 */
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { usePushHarness } from '../support/push-harness.ts';
import { expectReconciled, rejectLines, reportOf } from '../fixtures/push/push-report.ts';

const MODES = ['bulk', 'import'] as const;

describe.each(MODES)('push in %s mode: formats and entities', (mode) => {
  const { h, push } = usePushHarness();

  const storeRecord = (item: string, store: string | undefined) =>
    [...h.sandbox.control.world.productStore.table.rows()].find((r) => r.item_id === item && r.store_id === store);
  const product = (item: string) => [...h.sandbox.control.world.products.table.rows()].find((r) => r.item_id === item);

  it('product_store from a German Windows-1252 export: ; delimiter, decimal commas, 1.234,50, DD.MM.YYYY, mapped headers', async () => {
    const [s1, s2] = h.sandbox.control.state().stores;
    const source = await h.source('product_store', {
      mode,
      encoding: 'windows-1252',
      delimiter: ';',
      decimal_separator: ',',
      thousands_separator: '.',
      date_format: ['DD.MM.YYYY'],
      columns: { item_id: 'Artikelnummer', store_id: 'Filiale', current_price: 'Preis', regular_price: 'Listenpreis', price_effective_date: 'Gültig ab', store_name: 'Filialname' },
      defaults: { currency: 'EUR' },
    });
    const m = mode.toUpperCase();
    const text = [
      'Artikelnummer;Filiale;Preis;Listenpreis;Gültig ab;Filialname;Bemerkung',
      `${m}-4711;${s1};1,99;2,49;01.03.2026;Köln Hbf;€-Aktion`,
      `${m}-4712;${s1};1.234,50;;02.03.2026;Düsseldorf;`,
      `${m}-4713;${s2};0,5;;;München Süd;Straße`,
    ].join('\r\n');
    const result = await push(source, 'Preise.csv', iconv.encode(`${text}\r\n`, 'win1252'));
    const report = await reportOf(result);
    expect(report.rows).toMatchObject({ read: 3, sent: 3, accepted: 3, rejected: 0 });
    expectReconciled(report.rows);
    expect(report.warnings).toEqual(['columns not sent (not product_store fields): "Bemerkung"']);
    expect(storeRecord(`${m}-4711`, s1)).toMatchObject({ current_price: '1.99', regular_price: '2.49', price_effective_date: '2026-03-01', store_name: 'Köln Hbf', currency: 'EUR' });
    expect(storeRecord(`${m}-4712`, s1)).toMatchObject({ current_price: '1234.50', store_name: 'Düsseldorf' });
    expect(storeRecord(`${m}-4713`, s2)).toMatchObject({ current_price: '0.5', store_name: 'München Süd', price_effective_date: null });
  });

  it('products from UTF-8 with BOM and CRLF: quoted commas and line breaks, a non-ASCII custom column', async () => {
    const source = await h.source('products', { mode });
    const m = mode.toUpperCase();
    const csv = `\uFEFFitem_id,sku,product_name,brand,Größe\r\n${m}-P1,S1,"Tee, grün",Teekanne,XL\r\n${m}-P2,S2,"Zwei\r\nZeilen",,M\r\n${m}-P3,S3,Crème brûlée,Maison,\r\n`;
    const report = await reportOf(await push(source, 'produkte.csv', csv));
    expect(report.rows).toMatchObject({ read: 3, accepted: 3, rejected: 0 });
    expectReconciled(report.rows);
    expect(product(`${m}-P1`)).toMatchObject({ product_name: 'Tee, grün', brand: 'Teekanne', custom: { Größe: 'XL' } });
    expect(product(`${m}-P2`)).toMatchObject({ product_name: 'Zwei\r\nZeilen', custom: { Größe: 'M' } });
    expect(product(`${m}-P3`)).toMatchObject({ product_name: 'Crème brûlée', custom: null });
  });

  it('transactions from UTF-16LE with tabs, with a row rejected on its own line', async () => {
    const source = await h.source('transactions', { mode });
    const m = mode.toUpperCase();
    const text = `transaction_id\titem_id\ttransaction_timestamp\tquantity\tprice\tis_promo\n${m}-T1\tA\t2026-03-01T10:00:00Z\t2\t1.50\ttrue\n${m}-T2\tB\tgestern\t1\t2\tfalse\n${m}-T3\tC\t2026-03-01T11:30:00+01:00\t1\t0.99\t\n`;
    const report = await reportOf(await push(source, 'kasse.csv', Buffer.from(`\uFEFF${text}`, 'utf16le')));
    expect(report.rows).toMatchObject({ read: 3, accepted: 2, rejected: 1, rejected_locally: 1 });
    expectReconciled(report.rows);
    expect(await rejectLines(report.rejectsPath)).toEqual([
      'line\ttransaction_id\titem_id\ttransaction_timestamp\tquantity\tprice\tis_promo\tfield\tcode\tmessage',
      expect.stringMatching(new RegExp(`^3\\t${m}-T2\\tB\\tgestern\\t1\\t2\\tfalse\\ttransaction_timestamp\\tdatetime_parsing\\t`)) as unknown as string,
    ]);
    const keys = h.sandbox.control.state({ keys: true }).transactions.keys ?? [];
    expect(keys).toEqual(expect.arrayContaining([`${m}-T1`, `${m}-T3`]));
    expect(keys).not.toContain(`${m}-T2`);
  });

  it('competitor prices, never through the single create', async () => {
    const source = await h.source('competitor_prices', { mode });
    const before = h.sandbox.control.state().competitor_prices.count;
    const csv = 'competitor_name,item_id,observed_at,regular_price,effective_price,promo_price\nAldi,A,2026-11-20T08:00:00Z,1.99,1.79,1.79\nLidl,A,2026-11-20T08:00:00Z,2.09,2.09,\n';
    const report = await reportOf(await push(source, 'wettbewerb.csv', csv));
    expect(report.rows).toMatchObject({ read: 2, sent: 2, accepted: 2 });
    expectReconciled(report.rows);
    const state = h.sandbox.control.state();
    expect(state.competitor_prices.count).toBe(before + 2);
    expect(state.competitor_prices.single_creates).toBe(0);
    if (mode === 'import') expect(report.job_id).toMatch(/^[0-9a-f-]{36}$/);
    else expect(report.job_id).toBeNull();
  });
});
