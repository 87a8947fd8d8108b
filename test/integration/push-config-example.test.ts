/**
 * The `sources:` examples of config.example.yaml are commented out (the example config must load with no
 * source). Uncommented, they must load, and every source option must be shown with a comment.
 */
import { readFile, writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';

const EXAMPLE = fileURLToPath(new URL('../../config.example.yaml', import.meta.url));
const KEY = 'svc_live_abcdefghijklmnopqrstuvwxyz012345';

/** The example with its `#sources:` block (to the end of the file) uncommented. */
async function uncommented(): Promise<{ text: string; block: string }> {
  const lines = (await readFile(EXAMPLE, 'utf8')).split('\n');
  const start = lines.indexOf('#sources:');
  expect(start, 'config.example.yaml has a commented `#sources:` block').toBeGreaterThan(0);
  const out = lines.map((line, i) => (i >= start && line.startsWith('#') ? line.slice(1) : line));
  return { text: out.join('\n'), block: out.slice(start).join('\n') };
}

describe('config.example.yaml sources', () => {
  it('loads without sources as shipped', async () => {
    const config = await loadConfig(EXAMPLE, { PRICING_API_KEY: KEY });
    expect(config.sources).toEqual([]);
  });

  it('loads with the example sources uncommented, and documents every source option', async () => {
    const { text, block } = await uncommented();
    const dir = await mkdtemp(join(tmpdir(), 'pa-example-'));
    const file = join(dir, 'pricing-agent.yaml');
    await writeFile(file, text);
    const config = await loadConfig(file, { PRICING_API_KEY: KEY });
    expect(config.sources.map((s) => s.name)).toEqual(['erp-store-prices', 'pos-transactions']);
    expect(config.sources[0]).toMatchObject({
      entity: 'product_store',
      path: join(dir, 'inbox', 'store-prices'),
      encoding: 'windows-1252',
      delimiter: ';',
      decimal_separator: ',',
      columns: { item_id: 'Artikelnummer', store_id: 'Filiale', current_price: 'Preis' },
    });
    const first = config.sources[0] ?? {};
    for (const option of Object.keys(first)) {
      // Each option appears as a key, preceded by a comment line.
      expect(block, option).toMatch(new RegExp(`#[^\\n]*\\n\\s*(- )?${option}:`));
    }
  });
});
