/**
 * The guard of the contract suite: every operation of the client has a contract test. Each file of this folder owns
 * a set of operations (support.ts) and fails unless its client called every one of them; this test fails unless the
 * owned sets, together, are exactly the client's operations, each owned once. A new entry in OPERATIONS thus fails
 * the suite until a contract test calls it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/api/operations.ts';
import { CONTRACT_OWNERS } from './support.ts';

describe('contract coverage', () => {
  it('the operations exercised by the contract files are exactly Object.keys(OPERATIONS)', () => {
    const owned = Object.values(CONTRACT_OWNERS).flat();
    expect(new Set(owned).size, 'an operation is owned by two files').toBe(owned.length);
    expect([...owned].sort()).toEqual(Object.keys(OPERATIONS).sort());
    expect(owned).toHaveLength(33);
  });

  it('every owning file exists, opens its harness under its own name and ends with ownedOperationsTest', () => {
    for (const file of Object.keys(CONTRACT_OWNERS)) {
      const source = readFileSync(join(import.meta.dirname, `${file}.test.ts`), 'utf8');
      expect(source, `${file}.test.ts`).toContain(`contractForFile('${file}'`);
      expect(source, `${file}.test.ts`).toContain('ownedOperationsTest(');
    }
  });
});
