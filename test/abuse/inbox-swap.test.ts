/**
 * An inbox writer (a throwaway user whose only right is the inbox's group) tries to make the agent read a file it
 * was not given: another department's 0600 file, by a symlink swapped into processing/ or by an own processing/
 * folder put in place of the agent's. The agent runs as root here, as in CI: the agent's user is root, the
 * attacker is not.
 *
 * - processing/ is the agent's and 0750: the attacker cannot put or swap anything in it; with the sticky bit on the
 *   inbox, not rename it either.
 * - Were a file in processing/ replaced by a link anyway (root simulates the swap), it is opened without following
 *   links: refused, never read, nothing of the secret sent or written to a rejects file.
 * - An inbox whose agent folders are not the agent's own (the attacker's processing/ where the sticky bit is
 *   missing) is refused as a whole, with one line in `status` and `/readyz`, and nothing in it is worked.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { writeAgentConfig } from '../fixtures/push/push-fixtures.ts';
import { daemonHarness } from '../support/daemon-harness.ts';
import { until } from '../support/test-logger.ts';
import { runCli } from '../support/run-cli.ts';

const root = process.geteuid?.() === 0;
const suffix = randomBytes(3).toString('hex');
const GROUP = `pa-inbox-${suffix}`;
const ATTACKER = `pa-attk-${suffix}`;
const SECRET = 'item_id,sku,product_name\nSECRET-PAYROLL-1,SECRET-1,Salaries 2026\n';
const WRONG_KEY = 'svc_live_000000000000000000000000000000000000000000';

let gid = 0;
let sandbox: SandboxHandle;
let base: string;

/** Runs `sh -c script` as the attacker; its exit status (0: it worked). */
function asAttacker(script: string): number {
  try {
    execFileSync('runuser', ['-u', ATTACKER, '--', 'sh', '-c', script], { stdio: 'pipe' });
    return 0;
  } catch (error) {
    return (error as { status?: number }).status ?? 1;
  }
}

/** A group-writable inbox (the drop folder of a department), with or without the sticky bit. */
async function inbox(name: string, sticky: boolean): Promise<string> {
  const dir = join(base, name);
  await mkdir(dir);
  await chown(dir, 0, gid);
  await chmod(dir, sticky ? 0o3770 : 0o2770);
  return dir;
}

function sentSecret(): boolean {
  return [...sandbox.control.world.products.table.rows()].some((r) => r.item_id.startsWith('SECRET'));
}

describe.skipIf(!root)('inbox writers cannot make the agent read what it was not given', () => {
  beforeAll(async () => {
    execFileSync('groupadd', [GROUP]);
    execFileSync('useradd', ['-M', '-N', '-g', GROUP, '-s', '/usr/sbin/nologin', ATTACKER]);
    gid = Number(execFileSync('getent', ['group', GROUP], { encoding: 'utf8' }).split(':')[2]);
    sandbox = await startSandbox({ approvals: 0, largeGridRows: 0 });
    base = await mkdtemp(join(tmpdir(), 'pa-inbox-swap-'));
    await chmod(base, 0o711);
    // Another department's file: root's, 0600.
    await writeFile(join(base, 'payroll.csv'), SECRET, { mode: 0o600 });
  });
  afterAll(async () => {
    await sandbox?.close();
    execFileSync('userdel', [ATTACKER]);
    execFileSync('groupdel', [GROUP]);
    await rm(base, { recursive: true, force: true });
  });

  it('cannot touch processing/ (and with the sticky bit not rename it); a link swapped in anyway is refused, never read', async () => {
    const dir = await inbox('sticky', true);
    const config = await writeAgentConfig(join(base, 'cfg-sticky'), sandbox.url, [{ name: 'products', entity: 'products', path: dir }]);
    // The attacker drops a file of their own: that is all they may do.
    expect(asAttacker(`printf 'item_id,sku\\nA-1,A-1\\n' > ${dir}/prices.csv`)).toBe(0);
    // A rejected key defers it: it waits in processing/ for the next run.
    const deferred = await runCli(['push', join(dir, 'prices.csv'), '--source', 'products', '--config', config], { PRICING_API_KEY: WRONG_KEY });
    expect(deferred.code, deferred.stdout + deferred.stderr).toBe(1);
    const [waiting] = await readdir(join(dir, 'processing'));
    const claimed = join(dir, 'processing', waiting ?? '');
    expect(asAttacker(`ln -sf ${base}/payroll.csv ${claimed}`)).not.toBe(0);
    expect(asAttacker(`rm -f ${claimed}`)).not.toBe(0);
    expect(asAttacker(`mv ${dir}/processing ${dir}/old && mkdir ${dir}/processing`)).not.toBe(0);

    // Root plays the swap the folder rule prevents: the resumed file is a link to the secret now.
    await rm(claimed);
    await symlink(join(base, 'payroll.csv'), claimed);
    const resumed = await runCli(['push', join(dir, 'prices.csv'), '--source', 'products', '--config', config], { PRICING_API_KEY: sandbox.apiKey });
    expect(resumed.stdout + resumed.stderr).toMatch(/symbolic link/);
    expect(sentSecret()).toBe(false);
    for (const name of await readdir(dir, { recursive: true })) {
      if (/rejects/.test(String(name))) expect(await readFile(join(dir, String(name)), 'utf8')).not.toContain('SECRET');
    }
  });

  it('an inbox whose processing/ is the attacker\'s is refused: one line in status and /readyz, nothing in it worked', async () => {
    const h = await daemonHarness();
    try {
      const dir = await inbox(`open-${suffix}`, false);
      await h.writeConfig(
        `api:\n  base_url: ${h.sandbox.url}\n  key_file: ./api-key\nstate:\n  dir: ./state\nhttp:\n  port: 0\n` +
          `sources:\n  - name: products\n    entity: products\n    path: ${dir}\n    stable_ms: 100\n` +
          `  - name: absent\n    entity: transactions\n    path: ${dir}-absent\n`,
      );
      // Without the sticky bit a group member can replace the agent's folder with one of their own.
      await mkdir(join(dir, 'processing'), { mode: 0o750 });
      expect(asAttacker(`mv ${dir}/processing ${dir}/gone && mkdir -m 777 ${dir}/processing`)).toBe(0);
      expect(asAttacker(`printf '${SECRET.replace(/\n/g, '\\n')}' > ${dir}/drop.csv`)).toBe(0);
      const daemon = h.start();
      let readyz = '';
      await until(async () => {
        readyz = await h.get('/readyz').then((r) => r.body, () => '');
        return /inbox refused/.test(readyz);
      }, 'readyz to name the refused inbox', 30_000);
      expect(readyz).toMatch(new RegExp(`source products: inbox refused: ${dir}/processing belongs to user id \\d+, not to the agent's user \\(0\\)`));
      // A folder that is not there says where it should be, and what to do.
      expect(readyz).toContain(`the inbox folder of source absent is missing (${dir}-absent): create it, or mount the share`);
      const status = await runCli(['status', '--offline', '--config', h.configFile]);
      expect(status.code).toBe(1);
      expect(status.stdout).toMatch(/NOT OK: source products: inbox refused: .*processing belongs to user id/);
      // Never worked in: the drop is still where it was dropped, nothing sent, nothing moved.
      expect(await readdir(dir)).toEqual(expect.arrayContaining(['drop.csv', 'processing', 'gone']));
      expect(await readdir(join(dir, 'processing'))).toEqual([]);
      expect(h.sandbox.control.state().products.count).toBe(0);
      expect(daemon.output()).toMatch(/"msg":"inbox refused"/);
    } finally {
      await h.close();
    }
  });
});
