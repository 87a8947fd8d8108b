/**
 * Files as people save them (issue 28, points 2 to 4), pushed end to end against the sandbox: a farm shop's price
 * list saved from a spreadsheet (a letterhead, a header over two rows, an unnamed column, notes under the table,
 * prices with a currency, a cost column written with a decimal point in a comma-decimal file), as CSV and as a
 * workbook; and a bakery till's line log with credits written with a trailing minus. The platform holds exactly
 * what the report calls accepted; the lines that are no data are skipped and counted, never rejected.
 * The reading rules themselves, case by case: test/ingest/read-layouts.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { usePushHarness } from '../support/push-harness.ts';
import { expectReconciled, rejectLines, reportOf } from '../fixtures/push/push-report.ts';
import { tempDir } from '../ingest/support/read-helpers.ts';
import { workbook } from '../ingest/support/workbooks.ts';
import { readFile } from 'node:fs/promises';

const { h, push } = usePushHarness({ maxInFlight: 4 });
const dir = tempDir();

const world = () => h.sandbox.control.world;

/** The farm shop's list: 3 letterhead lines, the header on lines 4-5, 4 products, a blank line, 2 notes. */
function farmShop(store: string): string[][] {
  return [
    ['Hofladen Sonnenfeld', '', '', '', ''],
    ['Preisliste Frühjahr 2026', '', '', '', ''],
    ['Filiale', store, '', '', ''],
    ['Art.-Nr.', 'Bezeichnung', 'Preis', 'EK', ''],
    ['', '', 'brutto', 'netto', ''],
    ['H-001', 'Äpfel Elstar', '2,90 €', '1.45', 'kg'],
    ['H-002', 'Bergkäse', '1 299,00 €', '1,050.00', 'Laib'],
    ['H-003', 'Eier', '0,90 €', '0.41', 'Stk'],
    ['H-004', 'Honig', '1.50', '4.20', 'Glas'],
    ['', '', '', '', ''],
    ['', 'Lieferung frei Haus ab 50 €', '', '', ''],
    ['', 'Alle Preise inkl. MwSt.', '', '', ''],
  ];
}

const farmShopConfig = (format: 'csv' | 'xlsx', store: string) => ({
  format,
  decimal_separator: ',',
  header_rows: 2,
  columns: { item_id: 'Art.-Nr.', current_price: 'Preis brutto', unit_cost: 'EK netto' },
  number_format: { unit_cost: { decimal_separator: '.', thousands_separator: ',' } },
  ignore_columns: ['Bezeichnung', 'column_5'],
  defaults: { store_id: store, currency: 'EUR' },
});

describe("a farm shop's price list saved from a spreadsheet", () => {
  it.each(['csv', 'xlsx'] as const)('%s: the header found under the letterhead, 3 prices stored, 1 ambiguous price rejected, 5 lines skipped', async (format) => {
    const [store = ''] = h.sandbox.control.state().stores;
    const rows = farmShop(store);
    const content =
      format === 'csv'
        ? rows.map((r) => r.map((c) => (c.includes(';') ? `"${c}"` : c)).join(';')).join('\r\n') + '\r\n'
        : await readFile(await workbook(dir, 'preisliste.xlsx', [{ name: 'Preise', rows }]));
    const source = await h.source('product_store', { ...farmShopConfig(format, store), ...(format === 'csv' ? { delimiter: ';' } : {}) });
    const report = await reportOf(await push(source, `preisliste-${format}.${format}`, content));
    // 3 letterhead lines and 2 notes are skipped rows; the blank line is no row.
    expect(report.rows).toMatchObject({ read: 9, accepted: 3, rejected_locally: 1, skipped: 5 });
    expectReconciled(report.rows);
    expect(report.warnings).toContain('the header is on line 4-5: the 3 line(s) with content above it are skipped, not data');
    const stored = [...world().productStore.table.rows()].filter((r) => r.store_id === store && String(r.item_id).startsWith('H-'));
    expect(stored.map((r) => [r.item_id, r.current_price, r.unit_cost]).sort()).toEqual([
      ['H-001', '2.90', '1.45'],
      ['H-002', '1299.00', '1050.00'],
      ['H-003', '0.90', '0.41'],
    ]);
    const rejects = await rejectLines(report.rejectsPath);
    expect(rejects).toHaveLength(2);
    expect(rejects[1]).toMatch(/^9;H-004;.*current_price;decimal_parsing;"""1\.50"" is ambiguous/);
    expect(rejects[1]).not.toMatch(/set thousands_separator/);
  });
});

describe('the same price list pushed again with one price changed (delta push)', () => {
  it('sends the changed row only: the letterhead and the notes are never taken for rows, unchanged or new', async () => {
    const [, store = ''] = h.sandbox.control.state().stores;
    const csv = (rows: string[][]) => rows.map((r) => r.join(';')).join('\n') + '\n';
    const source = await h.source('product_store', { ...farmShopConfig('csv', store), delimiter: ';', delta: true });
    const first = farmShop(store).filter((r) => r[0] !== 'H-004');
    const r1 = await reportOf(await push(source, 'preisliste-1.csv', csv(first)));
    expect(r1.rows).toMatchObject({ read: 8, sent: 3, accepted: 3, skipped: 5 });
    const second = first.map((r) => (r[0] === 'H-003' ? ['H-003', 'Eier', '0,95 €', '0.41', 'Stk'] : r));
    const r2 = await reportOf(await push(source, 'preisliste-2.csv', csv(second)));
    expect(r2.rows).toMatchObject({ read: 8, sent: 1, accepted: 1, unchanged: 2, rejected: 0, skipped: 5 });
    expect(r2.delta).toMatchObject({ mode: 'delta', changed: 1, new: 0 });
    expectReconciled(r2.rows);
    const eggs = [...world().productStore.table.rows()].find((r) => r.store_id === store && r.item_id === 'H-003');
    expect(eggs).toMatchObject({ current_price: '0.95' });
  });
});

describe("a bakery till's line log: amounts with a currency code, credits with a trailing minus", () => {
  it('every line a transaction, the credits negative', async () => {
    const log = [
      'Bon;Zeit;Artikel;Menge;Betrag',
      '1001;2026-03-02T07:01:00Z;BROT-1;1;EUR 3,20',
      '1001;2026-03-02T07:01:00Z;BRÖT-4;4;EUR 1,60',
      '1002;2026-03-02T07:05:00Z;BROT-1;1-;EUR 3,20-',
      '1003;2026-03-02T07:09:00Z;TORTE;1;EUR 1\u00A0024,00',
      'Summe;;;;EUR 1 025,60',
      '',
    ].join('\n');
    const source = await h.source('transactions', {
      delimiter: ';',
      decimal_separator: ',',
      columns: { transaction_id: '{Bon}-{Artikel}', transaction_timestamp: 'Zeit', item_id: 'Artikel', quantity: 'Menge', price: 'Betrag' },
      defaults: { currency: 'EUR' },
    });
    const report = await reportOf(await push(source, 'kasse-2026-03-02.csv', log));
    // The "Summe" line carries an amount but no transaction: it has a transaction_id template's column (Bon) and is
    // rejected, never sent as a sale.
    expect(report.rows).toMatchObject({ read: 5, accepted: 4 });
    expectReconciled(report.rows);
    const line = (id: string) => [...world().transactions.table.rows()].find((r) => r.transaction_id === id);
    expect(line('1002-BROT-1')).toMatchObject({ quantity: '-1', price: '-3.20' });
    expect(line('1003-TORTE')).toMatchObject({ quantity: '1', price: '1024.00' });
    expect(line('1001-BRÖT-4')).toMatchObject({ quantity: '4', price: '1.60' });
  });
});
