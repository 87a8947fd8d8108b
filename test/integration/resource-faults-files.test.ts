/**
 * Folders and readers the agent does not control, under a running `pricing-agent run`:
 * - the archive folder missing: created again, the file archived as usual;
 * - the archive folder unwritable (a read-only bind mount: root ignores chmod): the rows are sent once, the file
 *   stays in processing/ with a clear error, and is archived once the folder can be written again (its retry, or a
 *   restart here), without sending a row twice;
 * - a POS reader holding one read transaction open on the outbox: the agent keeps pulling and pushing (WAL), the
 *   reader keeps its snapshot, and once it lets go the WAL stops growing (it is checkpointed and reused).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { bindReadOnly, mountsAvailable, unmount, unmountAll } from '../chaos/mounts.ts';
import { transactionsCsv } from '../fixtures/push/push-fixtures.ts';
import { daemonHarnessPerTest, until, untilReady, type DaemonHarness } from '../support/daemon-harness.ts';

const canMount = mountsAvailable(join('/tmp', `pa-mount-probe-${process.pid}`));
const mounted: string[] = [];
const openHarness = daemonHarnessPerTest(() => unmountAll(mounted));

function config(harness: DaemonHarness, pullSchedule = '*/5 * * * *'): string {
  return [
    `api:\n  base_url: ${harness.sandbox.url}\n  key_file: ./api-key\n`,
    `state:\n  dir: ./state\nhttp:\n  port: 0\nlog:\n  level: info\n`,
    `pull:\n  approved_prices:\n    schedule: "${pullSchedule}"\n`,
    `sources:\n  - name: tx\n    entity: transactions\n    path: ./inbox/tx\n    stable_ms: 200\n`,
  ].join('');
}

describe('the archive folder', () => {
  it('missing: created again, and the file is archived', { timeout: 60_000 }, async () => {
    const h = await openHarness();
    const daemon = await h.startReady(config(h));
    await writeFile(join(h.inbox('tx'), 'first.csv'), transactionsCsv('ARCH1', 10));
    await h.report('tx', 'first.csv');
    // The report is written before the file is moved next to it: wait for the file, then remove the folder.
    const archive = join(h.inbox('tx'), 'archive');
    await until(() => readdirSync(archive, { recursive: true }).some((n) => String(n).endsWith('first.csv')), 'first.csv archived');
    await rm(archive, { recursive: true });
    await writeFile(join(h.inbox('tx'), 'second.csv'), transactionsCsv('ARCH2', 10));
    await h.report('tx', 'second.csv');
    expect(existsSync(join(h.inbox('tx'), 'archive'))).toBe(true);
    expect(h.transactionKeys('ARCH2')).toHaveLength(10);
    expect(await daemon.stop()).toBe(0);
  });

  it.skipIf(!canMount)('unwritable: rows sent once, the file stays in processing/ with a clear error, archived once it can be', { timeout: 60_000 }, async () => {
    const h = await openHarness();
    await h.writeConfig(config(h));
    const archive = join(h.inbox('tx'), 'archive');
    await mkdir(archive, { recursive: true });
    bindReadOnly(archive);
    mounted.push(archive);
    const first = h.start();
    await untilReady(h);
    await writeFile(join(h.inbox('tx'), 'blocked.csv'), transactionsCsv('RO', 500));
    // The archive failure is logged, then the deferral: wait for the second line.
    await until(() => first.output().includes('file deferred; it stays in processing'), 'the deferral to be logged', 30_000);
    const line = first.output().split('\n').find((l) => l.includes('the file could not be archived')) ?? '';
    expect(line).toMatch(/"file":"blocked\.csv".*archive/);
    expect(first.output()).toMatch(/"file":"blocked\.csv".*"msg":"file deferred; it stays in processing and is tried again"/);
    expect(first.output()).not.toContain('push failed unexpectedly');
    // What the operator reads in status and the console: the folder, and what to do.
    expect(first.output()).toMatch(/"error":"[^"]*archive[^"]* is on a read-only file system \(EROFS\): mount it writable; the file stays in processing\//);
    expect((await readdir(join(h.inbox('tx'), 'processing'))).filter((n) => n.endsWith('blocked.csv'))).toHaveLength(1);
    expect(h.transactionKeys('RO')).toHaveLength(500);
    const requests = h.sandbox.control.state({ keys: false }).requests.total;

    // The folder is writable again. The file is retried at its retry time (30 s) or at the next start: a restart.
    unmount(archive);
    mounted.pop();
    await first.stop();
    const second = h.start();
    await h.report('tx', 'blocked.csv');
    // The report is written before the file is moved next to it: wait for the move.
    const processing = join(h.inbox('tx'), 'processing');
    await until(() => readdirSync(processing).length === 0, 'blocked.csv moved out of processing/');
    expect(readdirSync(archive, { recursive: true }).map(String).filter((n) => n.endsWith('blocked.csv'))).toHaveLength(1);
    expect(new Set(h.transactionKeys('RO')).size).toBe(500);
    // Nothing sent again: the restart's own key check, its start-up pull and reconciliation only.
    const bulkAgain = h.sandbox.control.state({ keys: false }).requests.total - requests;
    expect(bulkAgain).toBeLessThanOrEqual(4);
    expect(await second.stop()).toBe(0);
  });
});

/**
 * Approvals pulled while the reader holds the database. 3000 gave 8.2-8.6 MB of WAL, right at the 8 MiB bound (the
 * pages a version takes vary by a few percent between agent versions); 3500 puts it clearly past, as meant.
 */
const HELD_APPROVALS = 3500;

describe('a POS reader holding a long read transaction on the outbox', () => {
  it('does not stop the agent, and once it lets go the WAL stops growing', { timeout: 90_000 }, async () => {
    const h = await openHarness({ approvals: 0 });
    const daemon = await h.startReady(config(h, '*/1 * * * * *'));
    const dbPath = join(h.dir, 'state', 'pricing-agent.db');
    const wal = () => statSync(`${dbPath}-wal`).size;
    const acknowledged = () => h.sandbox.control.state().approvals.acknowledged;

    const pos = new Database(dbPath, { readonly: true, fileMustExist: true });
    try {
      pos.pragma('busy_timeout = 5000');
      pos.prepare('BEGIN').run();
      const seen = pos.prepare('SELECT count(*) FROM price_feed').pluck().get() as number;
      // While the reader holds its snapshot, the agent pulls 3500 approvals and pushes a file: about 9 MB of WAL,
      // more than twice the 4 MiB at which SQLite's auto-checkpoint would let the WAL be reused.
      h.sandbox.control.injectApprovals({ count: HELD_APPROVALS });
      await writeFile(join(h.inbox('tx'), 'during.csv'), transactionsCsv('POS', 2000));
      await until(() => acknowledged() === HELD_APPROVALS, 'the pull while a reader holds the database', 60_000);
      await h.report('tx', 'during.csv');
      expect(pos.prepare('SELECT count(*) FROM price_feed').pluck().get(), 'the reader keeps its snapshot').toBe(seen);
      const held = wal();
      pos.prepare('COMMIT').run();

      expect(held, 'the WAL grew while the reader held it (no checkpoint could finish)').toBeGreaterThan(8 * 1024 * 1024);

      // The reader let go. The first commits after it still append (the checkpoint that frees the WAL runs after
      // them), then the WAL is checkpointed and reused from its start: the same work twice more does not grow it.
      const round = async (n: number) => {
        h.sandbox.control.injectApprovals({ count: 3000 });
        await writeFile(join(h.inbox('tx'), `after-${n}.csv`), transactionsCsv(`POS${n}`, 2000));
        await until(() => acknowledged() === HELD_APPROVALS + 3000 * n, `pull round ${n}`, 60_000);
        await h.report('tx', `after-${n}.csv`);
        return wal();
      };
      const second = await round(1);
      const third = await round(2);
      // The first commit after the reader let go still appends; its auto-checkpoint then succeeds and the next
      // transaction starts the WAL over. That commit can be a whole delivery page (500 approvals of ~2 KB: about
      // 1.1 MB), so the allowance is one such page with room, not 1 MB (exceeded by 18 KB in a CI run).
      expect(second).toBeLessThanOrEqual(held + 2 * 1024 * 1024);
      // From then on the WAL is reused: the same work again does not grow it.
      expect(third).toBeLessThanOrEqual(second);
      expect(pos.prepare('SELECT count(*) FROM price_feed').pluck().get()).toBe(HELD_APPROVALS + 6000);
    } finally {
      pos.close();
    }
    expect(await daemon.stop()).toBe(0);
  });
});
