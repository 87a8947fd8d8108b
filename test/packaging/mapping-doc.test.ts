/** docs/mapping.md: every example on the page is a complete source that loads and compiles as written. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { sourceSchema } from '../../src/config/source-schema.ts';
import { compileSource } from '../../src/ingest/read/index.ts';
import { readRepoFile } from './support.ts';

const blocks = [...readRepoFile('docs/mapping.md').matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');

describe('docs/mapping.md', () => {
  it('has an example per feature', () => {
    const text = blocks.join('\n');
    for (const option of ['columns', 'file_name', 'maps', 'map_file', 'null_values', 'ignore_columns', 'fill_down', 'skip_rows', 'timezone', 'date_format', 'duplicate_keys', 'reject_threshold', 'product_level', 'header_row', 'header_rows', 'number_format']) {
      expect(text, option).toMatch(new RegExp(`\\b${option}:`));
    }
  });

  it.each(blocks.map((block, i) => [i, block] as const))('example %i loads and compiles', (_, block) => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-mapping-doc-'));
    writeFileSync(join(dir, 'stores.csv'), 'code,store_id\n0204,b3a1c2d4-0000-4000-8000-000000000204\n');
    const [source] = parse(block) as unknown[];
    const result = sourceSchema({ baseDir: dir, env: {}, warn: () => undefined }).safeParse(source);
    expect(result.error?.issues ?? []).toEqual([]);
    if (result.success) expect(() => compileSource(result.data)).not.toThrow();
  });
});
