/**
 * `pricing-agent status` and `pricing-agent outbox consumers` (child processes) flag a store whose due prices were
 * stored hours ago and not confirmed: the state database is written with a clock three hours back, as if the pull
 * had stored those rows then.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/config/feed-schema.ts';
import { recordApplied } from '../../src/store/feed-consumers.ts';
import { databasePath, openSqlite } from '../../src/store/sqlite/open-sqlite.ts';
import type { StatusReport } from '../../src/status/status-report.ts';
import { approval, deliver } from '../outbox/support.ts';
import { runCli } from '../support/run-cli.ts';

const A = 'aaaaaaaa-0000-4000-8000-00000000000a';
const B = 'bbbbbbbb-0000-4000-8000-00000000000b';
let dir: string;
let config: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pa-feed-status-'));
  const db = await openSqlite(databasePath(join(dir, 'state')), { now: () => Date.now() - 3 * 3_600_000 });
  const today = new Date().toISOString().slice(0, 10);
  await deliver(db, [approval(1, { store_id: A, effective_date: '2026-01-01' }), approval(2, { store_id: B, effective_date: null }), approval(3, { store_id: A, effective_date: '2999-01-01' })]);
  await recordApplied(db, 'pos-b', B, 2, `${today}T06:00:00Z`);
  await db.close();
  config = join(dir, 'pricing-agent.yaml');
  await writeFile(
    config,
    `api:\n  base_url: https://api.example.com\n  key: svc_live_TestKey0000111122223333\nstate:\n  dir: ./state\nhttp:\n  enabled: false\n` +
      `feed:\n  listen: 127.0.0.1:9465\n  apply_deadline: 90m\n  consumers:\n` +
      `    - { name: pos-a, token_sha256: ${sha256Hex('a'.repeat(40))}, stores: [${A}] }\n` +
      `    - { name: pos-b, token_sha256: ${sha256Hex('b'.repeat(40))}, stores: [${B}] }\n`,
  );
});

afterAll(() => rm(dir, { recursive: true, force: true }));

describe('status and outbox consumers with the feed', () => {
  it('flag the store with due prices unapplied past the deadline, and not the one that confirmed', async () => {
    const [json, text, consumers] = await Promise.all([
      runCli(['status', '--offline', '--json', '--config', config]),
      runCli(['status', '--offline', '--config', config]),
      runCli(['outbox', 'consumers', '--config', config]),
    ]);
    expect(json.code, json.stderr).toBe(0); // an overdue store is flagged, not an exit code
    const report = JSON.parse(json.stdout) as StatusReport;
    expect(report.feed?.overdue).toEqual([{ consumer: 'pos-a', store_id: A, rows: 1, oldest_recorded_at: expect.any(String) as unknown }]);
    expect(report.feed?.consumers.map((c) => [c.name, c.offset, c.last_seen, c.stores.map((s) => [s.applied_seq, s.lag_rows])])).toEqual([
      ['pos-a', null, null, [[null, 2]]],
      ['pos-b', null, null, [[2, 0]]],
    ]);
    expect(report.feed?.consumers[0]?.stores[0]?.lag_seconds).toBeGreaterThanOrEqual(3 * 3600 - 5);
    expect(text.stdout).toMatch(/^Feed +http:\/\/127\.0\.0\.1:9465 \(configured\); 2 consumers; apply deadline 90m$/m);
    expect(text.stdout).toMatch(new RegExp(`^ +pos-a: offset -, seen -; ${A} nothing confirmed \\(2 rows not applied, oldest 3 h\\)$`, 'm'));
    expect(text.stdout).toMatch(new RegExp(`^OVERDUE +pos-a store ${A}: 1 due price change not applied within 90m \\(oldest stored `, 'm'));
    expect(text.stdout).not.toMatch(/OVERDUE +pos-b/);
    expect(consumers.stdout).toMatch(new RegExp(`^pos-a +- +2 +- +${A} +- +2 +3 h +OVERDUE$`, 'm'));
    expect(consumers.stdout).toMatch(new RegExp(`^pos-b +- +1 +- +${B} +2 +0 +- *$`, 'm'));
  });
});
