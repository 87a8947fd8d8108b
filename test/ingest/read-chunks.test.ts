/**
 * RowReader.chunks (the push's hot path) hands out exactly what iterating the reader row by row does: the same
 * outcomes in the same order, the same counts, and on a file-level failure the same outcomes before the same error.
 */
import { describe, expect, it } from 'vitest';
import { readRows } from '../../src/ingest/read/index.ts';
import type { ReadSummary, RowOutcome } from '../../src/ingest/read/index.ts';
import { source, tempDir, writeTemp } from './support/read-helpers.ts';

const dir = tempDir();
const src = source('transactions', { decimal_separator: ',', date_format: 'DD.MM.YYYY HH:mm' });

interface Read {
  outcomes: RowOutcome<Record<string, unknown>>[];
  summary: ReadSummary;
  error: unknown;
}

async function byRow(file: string): Promise<Read> {
  const reader = await readRows(file, src, { highWaterMark: 97 });
  const outcomes: RowOutcome<Record<string, unknown>>[] = [];
  let error: unknown = null;
  try {
    for await (const outcome of reader) outcomes.push(outcome);
  } catch (e) {
    error = e;
  }
  return { outcomes, summary: reader.summary(), error };
}

async function byChunk(file: string): Promise<Read & { chunks: number }> {
  const reader = await readRows(file, src, { highWaterMark: 97 });
  const outcomes: RowOutcome<Record<string, unknown>>[] = [];
  let error: unknown = null;
  let chunks = 0;
  try {
    for await (const chunk of reader.chunks()) {
      chunks += 1;
      // Not opened with `unread`: no RowsUnread among them.
      for (const outcome of chunk) if (outcome.kind !== 'unread') outcomes.push(outcome);
    }
  } catch (e) {
    error = e;
  }
  return { outcomes, summary: reader.summary(), error, chunks };
}

function rows(count: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    if (i % 97 === 5) return ''; // blank line
    if (i % 89 === 7) return `T${i};A1;01.03.2026 10:00;1`; // too few fields
    const price = i % 83 === 3 ? 'n/a' : `${i % 100},50`; // invalid decimal
    return `T${i};A${i % 13};01.03.2026 10:${String(i % 60).padStart(2, '0')};2;${price};true`;
  });
}

const HEADER = 'transaction_id;item_id;transaction_timestamp;quantity;price;is_promo';

describe('RowReader.chunks', () => {
  it('gives the outcomes and counts of the row-by-row reader, in several chunks', async () => {
    const file = writeTemp(dir, [HEADER, ...rows(2000), ''].join('\r\n'));
    const [one, chunked] = [await byRow(file), await byChunk(file)];
    expect(one.error).toBeNull();
    expect(chunked.error).toBeNull();
    expect(chunked.outcomes).toEqual(one.outcomes);
    expect(chunked.summary).toEqual(one.summary);
    expect(chunked.summary.complete).toBe(true);
    expect(one.outcomes.filter((o) => o.kind === 'reject').length).toBeGreaterThan(20);
    expect(chunked.chunks).toBeGreaterThan(1);
  });

  it('hands out the outcomes before an unclosed quote, then the same error', async () => {
    const lines = rows(600);
    lines[450] = 'T450;"A1;01.03.2026 10:00;2;1,50;true'; // the quote runs on over the following lines
    const file = writeTemp(dir, [HEADER, ...lines, ''].join('\n'));
    const [one, chunked] = [await byRow(file), await byChunk(file)];
    expect(one.error).toMatchObject({ code: 'UNCLOSED_QUOTE' });
    expect(chunked.error).toMatchObject({ code: 'UNCLOSED_QUOTE', message: (one.error as Error).message });
    expect(chunked.outcomes).toEqual(one.outcomes);
    expect(one.outcomes.length).toBeGreaterThan(400);
  });
});
