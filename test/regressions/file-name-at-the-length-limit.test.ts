/**
 * Regression (a review of daily operation): a file whose name was near the file system's limit (255 bytes) was sent,
 * then failed every archiving attempt (ENAMETOOLONG on the temporary name of its rejects CSV) and waited for good in
 * processing/, in front of every newer file of its source. The agent's own names are now cut to fit
 * (src/file-name-length.ts); the ledger keeps the name as it was dropped.
 */
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fittedName } from '../../src/file-name-length.ts';
import { freeName } from '../../src/ingest/folders.ts';
import { usePushHarness } from '../support/push-harness.ts';

const { h, push } = usePushHarness();

describe('a file named up to the length limit', () => {
  it.each([
    ['ASCII', `${'P'.repeat(251)}.csv`],
    ['Japanese (3 bytes a character)', `${'価'.repeat(83)}.csv`],
  ])('%s: is archived with its report and rejects, and the next file of its source follows', async (what, name) => {
    expect(Buffer.byteLength(name)).toBeGreaterThanOrEqual(250);
    const source = await h.source('products');
    const result = await push(source, name, `item_id,sku,product_name\nA-1,S-1,${what}\n,S-2,no item id\n`);
    expect(result).toMatchObject({ outcome: 'done', file: { original_name: name } });
    const archived = (await readdir(join(source.inbox, 'archive'), { recursive: true })).filter((f) => f.includes('~'));
    expect(archived.map((f) => Buffer.byteLength(f.split('/').at(-1) ?? '')).every((bytes) => bytes <= 255)).toBe(true);
    expect(archived.map((f) => f.replace(/^.*[/]/, '').replace(/^.*~/, '~'))).toEqual(expect.arrayContaining(['~.csv', '~.csv.report.json', '~.csv.rejects.csv']));
    expect((await push(source, 'next.csv', `item_id,sku,product_name\nA-2,S-2,${what}\n`)).outcome).toBe('done');
  });

  it('leaves room for the longest name the agent adds beside a file (a held file\'s .preview.json)', async () => {
    const free = await freeName(h.dir, `${'a'.repeat(251)}.csv`, 7);
    expect(Buffer.byteLength(`${basename(free)}.preview.json`)).toBeLessThanOrEqual(255);
  });

  it('cuts a name at a character, keeps its extension, and leaves a name that fits as it is', () => {
    expect(fittedName('prices.csv', 12)).toBe('prices.csv');
    const cut = fittedName(`${'é'.repeat(127)}.csv`, 12); // 258 bytes
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(243);
    expect(cut).toMatch(/^é+~\.csv$/);
  });
});
