/**
 * The state's lock (src/store/state-lock.ts): one daemon per SQLite state, and nothing restored under one. It is a
 * system file lock, so the kernel drops it with the process that held it, SIGKILL included: no stale lock.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { lockState } from '../../src/store/state-lock.ts';
import { tempDirForTest } from '../support/after-test.ts';

const state = (dir: string) => ({ backend: 'sqlite', dir }) as Parameters<typeof lockState>[0];
const LOCK_MODULE = pathToFileURL(join(import.meta.dirname, '../../src/store/sqlite/state-lock.ts')).href;

describe('the state lock', () => {
  it('a second holder is refused with what to do, until the first releases it', () => {
    const dir = tempDirForTest('pa-state-lock-');
    const release = lockState(state(dir), 'first');
    expect(() => lockState(state(dir), 'stop it first')).toThrow(
      expect.objectContaining({ code: 'IN_USE', message: `another pricing-agent runs on state.dir ${dir}: stop it first` }) as Error,
    );
    release();
    lockState(state(dir), 'again')();
  });

  it('is free again the moment the process that held it is killed (SIGKILL)', async () => {
    const dir = tempDirForTest('pa-state-lock-');
    const holder = spawn(process.execPath, ['--input-type=module', '-e', `const { lockSqliteState } = await import(${JSON.stringify(LOCK_MODULE)}); globalThis.release = lockSqliteState(${JSON.stringify(dir)}, 'x'); process.stdout.write('locked\\n'); setInterval(() => {}, 60_000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      holder.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
      holder.once('exit', () => reject(new Error('the holder ended before it took the lock')));
    });
    expect(() => lockState(state(dir), 'stop it')).toThrow(expect.objectContaining({ code: 'IN_USE' }) as Error);
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    holder.kill('SIGKILL');
    await exited;
    lockState(state(dir), 'free')();
  });
});
