/**
 * The rejects CSV's layout, written and recognised by the same module (src/ingest/file/rejects-csv.ts): `line`, the file's
 * own columns, `extra_N` for fields beyond its header, `field`, `code`, `message`. What is recognised is exactly what
 * is written, whatever the delimiter and however odd the file's own column names.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRejectsHeader, recogniseRejectsHeader, rejectsHeader, writeRejectsCsv } from '../../src/ingest/file/rejects-csv.ts';

const dir = await mkdtemp(join(tmpdir(), 'pa-rejects-layout-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the rejects CSV layout', () => {
  it.each([
    [',', ['item_id', 'store_id', 'current_price'], 0],
    [';', ['Artikelnummer', 'Filiale', 'Preis; brutto', 'Gültig "ab"'], 2],
    ['\t', ['a b', ' padded '], 1],
    ['|', ['line', 'code'], 0], // the file's own columns may carry the agent's names
  ] as const)('with %j as delimiter: what is written is recognised', async (delimiter, headers, extras) => {
    const path = join(dir, `r${headers.length}${extras}.rejects.csv`);
    const raw = Array.from({ length: headers.length + extras }, (_, i) => `v${i}`);
    await writeRejectsCsv(path, { headers, delimiter, widest: headers.length + extras }, [{ line: 7, raw, errors: [{ field: null, code: 'field_count', message: 'm' }] }]);
    expect(await readRejectsHeader(path)).toEqual({ headers: headers.map((h) => h.trim()), extras });
  });

  it('takes apart a header as a spreadsheet may give it back, and refuses anything else', () => {
    expect(recogniseRejectsHeader(rejectsHeader(['a', 'b'], 2))).toEqual({ headers: ['a', 'b'], extras: 2 });
    expect(recogniseRejectsHeader([' line', 'a', 'field ', 'code', 'message'])).toEqual({ headers: ['a'], extras: 0 });
    expect(recogniseRejectsHeader(['line', 'field', 'code', 'message'])).toBeNull(); // no column of the file's own
    expect(recogniseRejectsHeader(['item_id', 'a', 'field', 'code', 'message'])).toBeNull();
    expect(recogniseRejectsHeader(['line', 'a', 'code', 'message'])).toBeNull();
    expect(recogniseRejectsHeader(['line', 'a', 'extra_2', 'field', 'code', 'message'])).toEqual({ headers: ['a', 'extra_2'], extras: 0 });
  });

  it('a file that is not a rejects CSV has no rejects header', async () => {
    const plain = join(dir, 'plain.csv');
    await writeFile(plain, 'item_id,store_id\nA,1\n');
    expect(await readRejectsHeader(plain)).toBeNull();
    expect(await readRejectsHeader(join(dir, 'missing.csv'))).toBeNull();
  });
});
