/** The `pull:` and `outbox:` config sections: defaults, load-time errors, and the examples in config.example.yaml. */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { API, load, loadError, PULL_DEFAULTS } from '../config/support.ts';

const EXAMPLE = fileURLToPath(new URL('../../config.example.yaml', import.meta.url));

/** The commented example blocks `# mirrors:` and `# exports:` of config.example.yaml, uncommented, in place. */
function uncommentExamples(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let inBlock = false;
  for (const line of lines) {
    const start = /^ {2}# (mirrors|exports):$/.exec(line);
    if (start) {
      out.pop(); // the `mirrors: []` / `exports: null` line before it
      out.push(`  ${start[1]}:`);
      inBlock = true;
      continue;
    }
    if (inBlock && /^ {2}# {2}/.test(line)) {
      out.push(`  ${line.slice(4)}`);
      continue;
    }
    inBlock = false;
    out.push(line);
  }
  return out.join('\n');
}

describe('pull and outbox config', () => {
  it('has defaults for everything', async () => {
    const config = await load(API);
    expect(config.pull).toEqual(PULL_DEFAULTS);
    expect(config.outbox).toEqual({ exports: null });
  });

  it('loads the commented examples of config.example.yaml', async () => {
    const text = uncommentExamples(await readFile(EXAMPLE, 'utf8'));
    const config = await load(text.replace(/^#?sources:[\s\S]*$/m, ''));
    expect(config.pull.mirrors.map((m) => m.stream)).toEqual(['products', 'grids']);
    expect(config.pull.mirrors[0]?.page_size).toBe(1000);
    expect(config.pull.mirrors[0]?.export).toMatch(/exports\/mirrors$/);
    expect(config.outbox.exports).toMatchObject({ format: 'csv', max_rows_per_file: 50000 });
  });

  it('refuses a bad cron, unknown filters, a page size over 500 and a stream listed twice, naming each', async () => {
    const error = await loadError(
      `${API}pull:\n  approved_prices:\n    schedule: "every 5 minutes"\n    page_size: 501\n    filters:\n      store: x\n` +
        `  mirrors:\n    - stream: products\n    - stream: products\n      filters: {store_id: x}\n`,
    );
    const paths = error.problems.map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'pull.approved_prices.schedule',
        'pull.approved_prices.page_size',
        'pull.approved_prices.filters.store',
        'pull.mirrors[1].stream',
        'pull.mirrors[1].filters.store_id',
      ]),
    );
    expect(error.message).toMatch(/not a valid cron expression/);
  });
});
