/**
 * `pricing-agent sandbox` as a user starts it: two lines on stdout, a few of its store ids on stderr (for a first store
 * price file), serves until SIGTERM, exits 0.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Pool, request } from 'undici';
import { describe, expect, it } from 'vitest';

describe('pricing-agent sandbox', () => {
  it('prints PRICING_API_URL and PRICING_API_KEY, serves, and stops on SIGTERM with exit code 0', async () => {
    const child = spawn(process.execPath, ['src/cli/main.ts', 'sandbox', '--port', '0', '--seed', '7', '--approvals', '5'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const lines: string[] = [];
      const reader = createInterface({ input: child.stdout });
      for await (const line of reader) {
        lines.push(line);
        if (lines.length === 2) break;
      }
      expect(lines[0]).toMatch(/^PRICING_API_URL=http:\/\/127\.0\.0\.1:\d+$/);
      expect(lines[1]).toMatch(/^PRICING_API_KEY=svc_live_[0-9A-Za-z]{40}$/);
      const url = lines[0]!.slice('PRICING_API_URL='.length);
      const key = lines[1]!.slice('PRICING_API_KEY='.length);
      const pool = new Pool(url);
      try {
        const res = await request(`${url}/v1/approved_prices?history=true`, { dispatcher: pool, headers: { authorization: `Bearer ${key}` } });
        expect(res.statusCode).toBe(200);
        expect(((await res.body.json()) as { items: unknown[] }).items).toHaveLength(5);
        // The store ids it printed are stores of the platform.
        const state = (await (await request(`${url}/_sandbox/state?keys=false`, { dispatcher: pool })).body.json()) as { stores: string[] };
        const [, listed, more] = /^sandbox: store ids (\S+, \S+, \S+) and (\d+) more \(all in http:\S+\/_sandbox\/state\)$/m.exec(stderr) ?? [];
        expect(listed?.split(', ')).toEqual(state.stores.slice(0, 3));
        expect(Number(more)).toBe(state.stores.length - 3);
      } finally {
        await pool.close();
      }
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
