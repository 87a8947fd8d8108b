/**
 * Delta push through the commands a retail IT person types, as child processes against a sandbox in the test process:
 * `push --dry-run` gives the figures without sending, `push` of a wrong export holds it (exit 1) with its preview,
 * `status` (text and --json) lists it with the command that releases it, `files release` sends it (no daemon: pushed
 * at once), and `push --full` sends every row.
 */
import { mkdir, mkdtemp, readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { writeAgentConfig } from '../fixtures/push/push-fixtures.ts';
import { runCli } from '../support/run-cli.ts';

let sandbox: SandboxHandle;
beforeAll(async () => {
  sandbox = await startSandbox({ approvals: 0, largeGridRows: 0 });
});
afterAll(() => sandbox.close());

it('dry run, held file, status, files release and push --full, as commands', { timeout: 120_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pa-delta-cli-'));
  const inbox = join(dir, 'inbox');
  await mkdir(inbox, { recursive: true });
  const config = await writeAgentConfig(dir, sandbox.url, [{ name: 'erp', entity: 'product_store', path: './inbox' }]);
  const store = sandbox.control.state().stores[0] ?? '';
  const csv = (prices: readonly string[]) => `item_id,store_id,current_price\n${prices.map((p, i) => `CLI-${i},${store},${p}`).join('\n')}\n`;
  const cli = (...args: string[]) => runCli([...args, '--config', config], { PRICING_API_KEY: sandbox.apiKey });
  const day1 = ['1.00', '2.00', '3.00', '4.00', '5.00', '6.00', '7.00', '8.00', '9.00', '10.00'];
  await writeFile(join(dir, 'day1.csv'), csv(day1));
  expect((await cli('push', join(dir, 'day1.csv'), '--source', 'erp')).code).toBe(0);

  // Day 2: one price changed, one key new. The dry run says what a push would send, and sends nothing.
  await writeFile(join(dir, 'day2.csv'), csv([...day1.slice(0, 9), '10.50', '11.00']));
  const requests = sandbox.control.state().requests.total;
  const dry = await cli('push', join(dir, 'day2.csv'), '--source', 'erp', '--dry-run');
  expect(dry.code, dry.stderr).toBe(0);
  expect(dry.stdout).toContain('would send 2 of 11 rows; 9 unchanged');
  expect(dry.stdout).toContain('compared with 10 known keys: 1 changed, 1 new, 0 changed on the platform');
  expect(sandbox.control.state().requests.total).toBe(requests);

  // A lost decimal point: 3.00 becomes 300. Held, nothing sent; the preview names the price move.
  await writeFile(join(inbox, 'day2.csv'), csv(['1.00', '2.00', '300', ...day1.slice(3)]));
  const held = await cli('push', join(inbox, 'day2.csv'), '--source', 'erp');
  expect(held.code, held.stderr).toBe(1);
  expect(held.stdout).toContain('day2.csv: held by the brakes; nothing was sent');
  const heldId = Number(/#(\d+) day2\.csv: held/.exec(held.stdout)?.[1]);
  expect(held.stdout).toContain(`release: pricing-agent files release ${heldId}`);
  expect(sandbox.control.state().requests.total).toBe(requests);
  const preview = JSON.parse(await readFile(join(inbox, 'held', 'day2.csv.preview.json'), 'utf8')) as Record<string, unknown>;
  expect(preview).toMatchObject({ rows: { changed: 1, unchanged: 9 }, largest_price_moves: [{ key: { item_id: 'CLI-2' }, before: '3', after: '300' }] });

  const status = await cli('status', '--json');
  const report = JSON.parse(status.stdout) as { held_files: { name: string; source: string; brakes: string[]; release_command: string }[] };
  expect(report.held_files).toEqual([expect.objectContaining({ name: 'day2.csv', source: 'erp', release_command: `pricing-agent files release ${heldId}` })]);
  expect(report.held_files[0]?.brakes[0]).toMatch(/a price would move by 9900 %/);
  const text = (await cli('status')).stdout;
  expect(text).toMatch(/Held by the brakes[^\n]*\n +#\d+ erp day2\.csv, held \S+: a price would move by 9900 %/);
  // In the sources table a held file is neither failed nor done: the last file shows as held.
  expect(text).toMatch(/\nerp +0 +0 +1 +0 +10\/0 +#\d+ day2\.csv held /);

  // A held file is not a failed one: files retry refuses it and names the release (it moved it back as if failed,
  // and left a held entry no release could send). A held file moved away by hand: the release says so.
  const id = /#(\d+) day2\.csv: held/.exec(held.stdout)?.[1] ?? '';
  // Shown as held everywhere (the ledger records it as failed, error HELD): files show, and files list --status.
  const [shown, listed] = await Promise.all([cli('files', 'show', id, '--json'), cli('files', 'list', '--status', 'held', '--json')]);
  expect((JSON.parse(shown.stdout) as { status: string }).status).toBe('held');
  expect((JSON.parse(listed.stdout) as { id: number; status: string }[]).map((f) => [f.id, f.status])).toEqual([[Number(id), 'held']]);
  const retried = await cli('files', 'retry', id);
  expect({ code: retried.code, stderr: retried.stderr.trim() }).toEqual({
    code: 2,
    stderr: `file #${id} (day2.csv) is held by the brakes, not failed: read its preview, then send it with pricing-agent files release ${id}`,
  });
  const heldPath = join(inbox, 'held', 'day2.csv');
  await rename(heldPath, join(dir, 'aside.csv'));
  const gone = await cli('files', 'release', 'day2.csv');
  expect(gone.code).toBe(2);
  expect(gone.stderr).toContain(`#${id} day2.csv is no longer at ${heldPath} (moved or deleted by hand)`);
  await rename(join(dir, 'aside.csv'), heldPath);

  // Released: no daemon answers, so it is pushed now, without the brakes; nothing is held any more.
  const release = await cli('files', 'release', 'day2.csv');
  expect(release.code, release.stderr).toBe(0);
  expect(release.stdout).toContain('released; no daemon answers, so it was pushed now');
  const prices = () => new Map([...sandbox.control.world.productStore.table.rows()].filter((r) => r.item_id.startsWith('CLI-')).map((r) => [r.item_id, r.current_price]));
  expect(prices().get('CLI-2')).toBe('300');
  expect(JSON.parse((await cli('status', '--json')).stdout)).toMatchObject({ held_files: [] });

  // push --full: every row sent again (none changed), counted as a full send; the brakes still apply.
  await writeFile(join(dir, 'day3.csv'), csv(['1.00', '2.00', '300', ...day1.slice(3)]));
  const full = await cli('push', join(dir, 'day3.csv'), '--source', 'erp', '--full', '--json');
  expect(full.code, full.stderr).toBe(0);
  const out = JSON.parse(full.stdout) as { report: string; rows: Record<string, number> };
  expect(out.rows).toMatchObject({ read: 10, sent: 10, unchanged: 0 });
  expect(JSON.parse(await readFile(out.report, 'utf8'))).toMatchObject({ delta: { mode: 'full', reason: 'push --full' } });
});
