import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Of } from '../../src/ingest/file/claim.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('sha256Of (the claim\'s content hash)', () => {
  it('is the SHA-256 of the whole file, read in several reads of its own size', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-claim-hash-'));
    dirs.push(dir);
    for (const size of [0, 1, 1024 * 1024 - 1, 1024 * 1024, 3 * 1024 * 1024 + 17]) {
      const file = join(dir, `f-${size}`);
      writeFileSync(file, Buffer.from(Array.from({ length: size }, (_, i) => (i * 7919) % 251)));
      expect(await sha256Of(file)).toBe(createHash('sha256').update(readFileSync(file)).digest('hex'));
    }
  });
});
