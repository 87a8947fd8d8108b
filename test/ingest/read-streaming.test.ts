import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRows } from '../../src/ingest/read/index.ts';
import { source, tempDir } from './support/read-helpers.ts';

const dir = tempDir();
const ROWS = 200_000;

async function bigFile(): Promise<string> {
  const path = join(dir, 'big.csv');
  const out = createWriteStream(path);
  out.write('transaction_id;item_id;transaction_timestamp;quantity;price;is_promo\r\n');
  for (let i = 0; i < ROWS; i++) {
    const price = i % 1000 === 999 ? 'abc' : `${i % 100},${String(i % 100).padStart(2, '0')}`;
    if (!out.write(`T${i};A${i % 997};01.03.2026 10:${String(i % 60).padStart(2, '0')};1;${price};nein\r\n`)) {
      await once(out, 'drain');
    }
  }
  out.end();
  await once(out, 'finish');
  return path;
}

describe('a 200,000-row file', () => {
  it('is streamed: rows come out long before the file is read, and the counts reconcile at the end', async () => {
    const path = await bigFile();
    const src = source('transactions', { decimal_separator: ',', date_format: 'DD.MM.YYYY HH:mm' });
    const reader = await readRows(path, src);
    const { totalBytes } = reader.progress();
    let firstRowBytes = -1;
    let maxAhead = 0;
    let accepted = 0;
    let rejected = 0;
    let lastLine = 1;
    for await (const outcome of reader) {
      const { bytesRead, rows } = reader.progress();
      if (firstRowBytes < 0) firstRowBytes = bytesRead;
      // Bytes taken from the file minus (roughly) the bytes of the rows handed out: bounded by the buffers.
      maxAhead = Math.max(maxAhead, bytesRead - (rows / ROWS) * totalBytes);
      expect(outcome.line).toBe(lastLine + 1);
      lastLine = outcome.line;
      if (outcome.kind === 'row') accepted++;
      else rejected++;
    }
    expect(totalBytes).toBeGreaterThan(8_000_000);
    expect(firstRowBytes).toBeLessThan(256 * 1024);
    expect(maxAhead).toBeLessThan(1024 * 1024);
    expect(rejected).toBe(ROWS / 1000);
    expect(reader.summary()).toMatchObject({
      complete: true,
      rows: ROWS,
      accepted,
      rejected,
      lines: ROWS + 1,
      bytesRead: totalBytes,
    });
  });

  it('closes the file when the consumer stops early', async () => {
    const reader = await readRows(join(dir, 'big.csv'), source('transactions', { decimal_separator: ',', date_format: 'DD.MM.YYYY HH:mm' }));
    let seen = 0;
    for await (const _ of reader) if (++seen === 10) break;
    expect(reader.summary()).toMatchObject({ complete: false, rows: 10 });
    expect(reader.progress().bytesRead).toBeLessThan(reader.progress().totalBytes);
  });
});
