/**
 * `npm run bench:xlsx`: reading a large sheet (src/ingest/read/xlsx-records.ts) against reading the same rows as CSV
 * with csv-parse (the CSV reader's parser), each in a child process of its own so its peak RSS is its own.
 *
 *   node bench/xlsx.ts [--rows 500000] [--full]
 *
 * Rows: item_id (unique text, so the workbook's shared strings table grows with the rows, as a real export's does),
 * store_id (50 values), current_price (a number), price_effective_date (a date cell), note (text). Each reader reads
 * the sheet at `rows` and at a fifth of it: memory that does not grow with the file is "flat" (the ratio of the two
 * peaks), apart from the shared strings exceljs must hold (any cell may refer to any string). --full also reads a
 * sheet of Excel's maximum, 1,048,576 rows (header included), and checks that every row arrives.
 *
 * Ends with one line: bench:xlsx rows=<n> xlsx_rows_s=<> csv_rows_s=<> ratio=<xlsx/csv> xlsx_rss_mb=<> rss_growth=<x.xx>
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { parse } from 'csv-parse';
import { openXlsxRecords } from '../src/ingest/read/xlsx-records.ts';
import { bigWorkbook } from '../test/ingest/support/workbooks.ts';

const EXCEL_MAX_ROWS = 1_048_576;

interface Measured {
  rows: number;
  ms: number;
  rssMb: number;
}

const STORES = Array.from({ length: 50 }, (_, i) => `S${String(i).padStart(3, '0')}`);
const row = (i: number) => [`ITM-${String(i).padStart(8, '0')}`, STORES[i % 50] ?? '', (i % 997) + 0.99, new Date(Date.UTC(2026, 10, 1 + (i % 28))), i % 3 === 0 ? 'Aktion' : ''];
const HEADER = ['item_id', 'store_id', 'current_price', 'price_effective_date', 'note'];

async function child(kind: 'xlsx' | 'csv', file: string): Promise<void> {
  const started = performance.now();
  let rows = 0;
  if (kind === 'xlsx') {
    const records = await openXlsxRecords(file);
    for (let r = await records.next(); r !== undefined; r = await records.next()) rows++;
    records.finish();
  } else {
    for await (const record of createReadStream(file).pipe(parse({ relax_column_count: true }))) {
      void record;
      rows++;
    }
  }
  const measured: Measured = { rows, ms: performance.now() - started, rssMb: process.resourceUsage().maxRSS / 1024 };
  process.send?.(measured);
}

async function measure(kind: 'xlsx' | 'csv', file: string): Promise<Measured> {
  const proc = fork(new URL(import.meta.url).pathname, ['--child', kind, file], { execArgv: ['--max-semi-space-size=8', '--max-old-space-size=1536'] });
  const [result] = (await once(proc, 'message')) as [Measured];
  await once(proc, 'exit');
  return result;
}

async function csvFile(path: string, count: number): Promise<string> {
  const out = createWriteStream(path);
  out.write(`${HEADER.join(',')}\n`);
  for (let i = 0; i < count; i++) {
    const [id, store, price, date, note] = row(i);
    if (!out.write(`${String(id)},${String(store)},${String(price)},${(date as Date).toISOString().slice(0, 10)},${String(note)}\n`)) await once(out, 'drain');
  }
  out.end();
  await finished(out);
  return path;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rows: { type: 'string', default: '500000' }, full: { type: 'boolean', default: false }, child: { type: 'string' } }, allowPositionals: true });
  const dir = await mkdtemp(join(tmpdir(), 'pa-bench-xlsx-'));
  try {
    const rows = Number(values.rows);
    const small = Math.round(rows / 5);
    const say = (text: string) => process.stderr.write(`bench:xlsx ${text}\n`);
    say(`writing sheets of ${small} and ${rows} rows (and the same as CSV)`);
    const files = {
      xlsxSmall: await bigWorkbook(join(dir, 'small.xlsx'), HEADER, small, row),
      xlsx: await bigWorkbook(join(dir, 'big.xlsx'), HEADER, rows, row),
      csv: await csvFile(join(dir, 'big.csv'), rows),
    };
    const xlsxSmall = await measure('xlsx', files.xlsxSmall);
    const xlsx = await measure('xlsx', files.xlsx);
    const csv = await measure('csv', files.csv);
    const line = (name: string, m: Measured) => say(`${name}: ${m.rows} records in ${(m.ms / 1000).toFixed(1)} s (${Math.round((m.rows / m.ms) * 1000)} rows/s), peak RSS ${m.rssMb.toFixed(1)} MB`);
    line(`xlsx ${small}`, xlsxSmall);
    line(`xlsx ${rows}`, xlsx);
    line(`csv  ${rows}`, csv);
    if (xlsx.rows !== rows + 1 || csv.rows !== rows + 1) throw new Error(`rows lost: xlsx ${xlsx.rows}, csv ${csv.rows}, expected ${rows + 1}`);
    if (values.full) {
      const max = await bigWorkbook(join(dir, 'max.xlsx'), HEADER, EXCEL_MAX_ROWS - 1, row);
      const full = await measure('xlsx', max);
      line(`xlsx ${EXCEL_MAX_ROWS} (Excel's maximum)`, full);
      if (full.rows !== EXCEL_MAX_ROWS) throw new Error(`the full sheet gave ${full.rows} records, not ${EXCEL_MAX_ROWS}`);
    }
    const rate = (m: Measured) => Math.round((m.rows / m.ms) * 1000);
    process.stdout.write(
      `bench:xlsx rows=${rows} xlsx_rows_s=${rate(xlsx)} csv_rows_s=${rate(csv)} ratio=${(rate(xlsx) / rate(csv)).toFixed(2)} ` +
        `xlsx_rss_mb=${xlsx.rssMb.toFixed(0)} csv_rss_mb=${csv.rssMb.toFixed(0)} rss_growth=${(xlsx.rssMb / xlsxSmall.rssMb).toFixed(2)}\n`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const childIndex = process.argv.indexOf('--child');
if (childIndex !== -1) await child(process.argv[childIndex + 1] as 'xlsx' | 'csv', process.argv[childIndex + 2] ?? '');
else await main();
