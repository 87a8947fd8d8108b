/**
 * `sources suggest`: what a column's cells are (column-profile.ts), and the draft of a source for files as people
 * save them (draft-source.ts through sample-file.ts, on real files in a temp dir): a letterhead above a header over
 * two lines, a till's line log whose receipts repeat, numbers written with currencies and grouped digits, and a
 * placeholder that `config validate` refuses.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { profileColumn } from '../../src/ingest/suggest/column-profile.ts';
import { draftSource, sourceNameOf } from '../../src/ingest/suggest/draft-source.ts';
import { SourceSchema } from '../../src/config/source-schema.ts';
import { normalizeName } from '../../src/ingest/suggest/field-names.ts';
import { sampleFile } from '../../src/ingest/suggest/sample-file.ts';
import { runCli } from '../support/run-cli.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pa-suggest-'));
});

async function written(name: string, content: string | Buffer): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, content);
  return file;
}

async function draftOf(name: string, content: string | Buffer, set: Record<string, string> = {}) {
  const file = join(dir, name);
  await writeFile(file, content);
  const draft = draftSource({ sample: await sampleFile(file), fileName: name, set });
  return { file, draft, entry: (parse(draft.yaml) as Record<string, unknown>[])[0] ?? {} };
}

describe('column profiles', () => {
  const number = (cells: string[]) => profileColumn(0, 'x', cells).number;

  it('reads numbers as people write them: currencies around them, grouped digits, a trailing minus', () => {
    expect(number(['0,90 €', '12,50 €'])).toMatchObject({ decimal: ',', thousands: null, currency: '€', ambiguous: false });
    expect(number(['EUR 12.90', 'EUR 3.00'])).toMatchObject({ decimal: '.', currency: 'EUR' });
    expect(number(['1 299,00 kr', '99,00 kr'])).toMatchObject({ decimal: ',', thousands: ' ', currency: 'kr' });
    expect(number(['1\u00a0299,00', '2\u202f500,10'])).toMatchObject({ decimal: ',', thousands: ' ' });
    expect(number(['12.90-', '3.10'])).toMatchObject({ decimal: '.', trailingMinus: true });
    expect(number(['1.234,50', '0,99'])).toMatchObject({ decimal: ',', thousands: '.' });
  });

  it('says when a number reads both ways, and lets other cells settle it', () => {
    expect(number(['1.234', '2.500'])).toMatchObject({ decimal: null, ambiguous: true });
    expect(number(['1.234', '0,90'])).toMatchObject({ decimal: ',', ambiguous: false });
    expect(number(['12.90', '1,50'])).toBeNull(); // a point in one cell, a comma in another: not one format
  });

  it('finds the date format that reads every cell, and asks what the sample cannot tell', () => {
    expect(profileColumn(0, 'd', ['24.12.2026', '1.3.2026'])).toMatchObject({ kind: 'date', dateFormat: 'D.M.YYYY', dayMonthUnsure: false });
    expect(profileColumn(0, 'd', ['12/1/10 8:26', '12/1/10 9:02'])).toMatchObject({ kind: 'datetime', dateFormat: 'M/D/YY H:mm', dayMonthUnsure: true, needsTimezone: true });
    expect(profileColumn(0, 'd', ['2026-11-20T08:00:00Z'])).toMatchObject({ kind: 'datetime', dateFormat: 'iso', needsTimezone: false });
    expect(profileColumn(0, 'd', ['2026-11-20 08:00'])).toMatchObject({ dateFormat: 'iso', needsTimezone: true });
  });

  it('lists the cells that mean empty, and names a column without a header by its position', () => {
    expect(profileColumn(3, '', ['1', '#N/A', 'NONE', '-', '2'])).toMatchObject({ name: 'column_4', nullMarkers: ['#N/A', 'NONE', '-'], filled: 2 });
  });

  it('matches names written together or apart, with accents', () => {
    expect(normalizeName('SpecialPrice')).toBe('special price');
    expect(normalizeName('Gültig ab')).toBe('gultig ab');
  });
});

describe('the draft\'s source name', () => {
  it('is one config validate accepts, whatever the file is called', () => {
    expect(sourceNameOf('_Preise_Filiale_13.csv')).toBe('preise_filiale_13');
    expect(sourceNameOf('Prix magasin (été).xlsx')).toBe('prix-magasin-ete');
    expect(sourceNameOf('---.csv')).toBe('source');
    const long = `${'Filiale_'.repeat(12)}.csv`;
    for (const file of ['_Preise_Filiale_13.csv', '.hidden.csv', long, 'ÄÖÜ.csv', 'export-.csv']) {
      const name = sourceNameOf(file);
      expect(SourceSchema.safeParse({ name, entity: 'products', path: '/srv/inbox' }).error?.issues, `${file} -> ${name}`).toBeUndefined();
    }
    expect(sourceNameOf(long)).toHaveLength(63); // cut at 64, the trailing _ taken off
  });
});

describe('drafts', () => {
  it('a first data row without numbers is a row, not the header\'s second line: it is shaped like the rows below', async () => {
    const csv = 'Artikelnummer,Bezeichnung,Marke,Kategorie,EAN\nSKU-001,Apfel Elstar,,Obst,\nSKU-002,Birne Williams,Bio,Obst,4006381333931\nSKU-003,Kiwi,Bio,Obst,4006381333932\n';
    const { entry } = await draftOf('produkte.csv', csv);
    expect(entry).toMatchObject({ entity: 'products', columns: { item_id: 'Artikelnummer', product_name: 'Bezeichnung' } });
    expect(entry['header_rows']).toBeUndefined();
  });

  it('takes the encoding from the whole file: a Windows-1252 letter far down is seen, a UTF-8 letter across the sample end is no error', async () => {
    const lines = Array.from({ length: 12_000 }, (_, i) => `A-${i};Artikel ${i};1,${String(i % 100).padStart(2, '0')}`);
    const late = await sampleFile(await written('late-umlaut.csv', iconv.encode(`item_id;product_name;price\n${lines.join('\n')}\nA-x;Müsli;2,00\n`, 'win1252')));
    expect([late.encoding, late.encodingWhy]).toEqual(['windows-1252', expect.stringMatching(/^not valid UTF-8 further down the file/) as unknown]);
    // "ü" (2 bytes in UTF-8) 4 bytes before the end of the first 256 KiB read: still UTF-8.
    const pad = 256 * 1024 - 4 - 'item_id;product_name\n'.length;
    const across = await sampleFile(await written('across.csv', Buffer.from(`item_id;product_name\n${'x'.repeat(pad)}ü;Müsli\n`, 'utf8')));
    expect(across.encoding).toBe('utf-8');
  });
  it('a spreadsheet price list: letterhead, a header over two lines, decimal commas, a note under the table', async () => {
    const letterhead = ['Hofladen Sonnenwiese GmbH;;', 'Dorfstraße 3;;', '12345 Beispielstadt;;', ';;', 'Preisliste gültig ab 01.12.2026;;', ';;'];
    const rows = ['Artikel;Bezeichnung;Preis', 'Nr.;;je Stück', 'A-1;Äpfel;0,90 €', 'A-2;Birnen;1,20 €', 'A-3;Honig;1 299,00 €', ';;', 'Alle Preise inkl. MwSt.;;'];
    const { entry } = await draftOf('preisliste.csv', iconv.encode(`${[...letterhead, ...rows].join('\r\n')}\r\n`, 'win1252'), { store_id: 'S-1' });
    expect(entry).toMatchObject({
      entity: 'product_store',
      encoding: 'windows-1252',
      delimiter: ';',
      header_row: 7,
      header_rows: 2,
      decimal_separator: ',',
      thousands_separator: 'space',
      columns: { item_id: 'Artikel Nr.', current_price: 'Preis je Stück' },
      defaults: { store_id: 'S-1', currency: '${SET_CURRENCY}' },
    });
  });

  it("a till's line log: a receipt over several lines, one item twice, gets a key that keeps every line", async () => {
    const log = ['Bon;Zeit;Artikel;Menge;Preis', '1001;24.11.2026 08:01;BROT;1;2,50', '1001;24.11.2026 08:01;BROT;1;2,50', '1002;24.11.2026 08:05;KAFFEE;2;1,80', ''].join('\n');
    const { draft, entry } = await draftOf('kasse.csv', log, { currency: 'EUR' });
    expect(draft.entity).toBe('transactions');
    expect(entry['columns']).toMatchObject({ transaction_id: '{Bon}-{line}', item_id: 'Artikel', transaction_timestamp: 'Zeit', quantity: 'Menge', price: 'Preis' });
    expect(entry).toMatchObject({ date_format: 'D.M.YYYY H:mm', decimal_separator: ',' });
    expect(draft.yaml).toContain('QUESTION: the times carry no offset');
    expect(draft.placeholders).toEqual([]);
  });

  it('a decimal point in one column and a comma in another: the column written otherwise gets its own number_format', async () => {
    const { entry } = await draftOf('mixed.csv', 'Artikelnummer;Filiale;Preis;Listenpreis\nA;S1;1,50;2.00\nB;S1;0,99;1.20\n', { currency: 'EUR' });
    expect(entry).toMatchObject({ columns: { current_price: 'Preis', regular_price: 'Listenpreis', store_id: 'Filiale' } });
    expect(entry['decimal_separator']).toBeUndefined();
    expect(entry['number_format']).toEqual({ current_price: { decimal_separator: ',' } });
  });

  it('a field the file does not hold is a placeholder that config validate refuses, and --preview waits for it', async () => {
    const { file, draft } = await draftOf('prices.csv', 'item_id,price\nA,1.00\nB,2.00\n', {});
    expect(draft.entity).toBe('product_store');
    expect(draft.placeholders).toEqual(['store_id', 'currency']);
    const config = join(dir, 'suggested.yaml');
    await writeFile(config, `api: { base_url: "http://127.0.0.1:9", key: svc_live_x }\nstate: { dir: ./state }\nsources:\n${draft.yaml}`);
    const validate = await runCli(['config', 'validate', '--config', config]);
    expect(validate.code).toBe(2);
    expect(validate.stderr).toMatch(/SET_STORE_ID is not set/);
    const refused = await runCli(['sources', 'suggest', file, '--preview', '2']);
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('cannot preview before store_id, currency is set') as unknown });
    const shown = await runCli(['sources', 'suggest', file, '--set', 'store_id=S-1', '--set', 'currency=EUR', '--preview', '1']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('#   line 2: {"item_id":"A","store_id":"S-1","current_price":"1.00","currency":"EUR"}');
    expect(shown.stdout).toMatch(/rows: +2 read, 2 valid, 0 rejected/);
    // A --set the entity has no field for: one sentence and exit 2 (it printed zod's issues as JSON, exit 1).
    const wrong = await runCli(['sources', 'suggest', file, '--set', 'store_id=S-1', '--set', 'currency=EUR', '--set', 'colour=red', '--preview', '1']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr.trim()).toMatch(/^defaults\.colour: colour is not a product_store field \(fields: .*\): correct the --set values$/);
  });
});
