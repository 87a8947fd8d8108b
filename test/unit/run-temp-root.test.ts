/**
 * The run's temp folder (test/support/run-temp-root.ts): the workers and the child processes they start make their
 * temp folders inside it, so that the run removes them all at its end.
 */
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('the run temp folder', () => {
  it('is the temp folder of this worker and of a child process it starts', () => {
    expect(basename(tmpdir())).toMatch(/^pa-test-run-/);
    const childTmp = execFileSync(process.execPath, ['-p', "require('node:os').tmpdir()"], { encoding: 'utf8' }).trim();
    expect(childTmp).toBe(tmpdir());
  });
});
