import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { KEY } from './support.ts';

const EXAMPLE = fileURLToPath(new URL('../../config.example.yaml', import.meta.url));

describe('config.example.yaml', () => {
  it('loads with PRICING_API_KEY set', async () => {
    const config = await loadConfig(EXAMPLE, { PRICING_API_KEY: KEY });
    expect(config.api).toMatchObject({ key: KEY, timeout_ms: 30000, max_connections: 4, proxy: null });
    expect(config.log).toEqual({ level: 'info', pretty: false });
  });

  it('documents every option of the api, state and log sections', async () => {
    const text = await readFile(EXAMPLE, 'utf8');
    const config = await loadConfig(EXAMPLE, { PRICING_API_KEY: KEY });
    for (const [section, values] of Object.entries(config)) {
      for (const option of Object.keys(values)) {
        expect(text, `${section}.${option}`).toMatch(new RegExp(`^\\s*#?\\s*${option}:`, 'm'));
      }
    }
  });
});
