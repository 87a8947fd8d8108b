/**
 * What the demo did, and whether it checks out: the outcome of every sample file against the rows it holds, the
 * outbox against the platform's truth (the sandbox's own book of approvals), the per-store files against the feed.
 * `ok` is true only when every check passes; `demo` exits 0 only then.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxControl } from '../sandbox/index.ts';
import { getAckState } from '../store/acknowledgements.ts';
import { countCurrentAmong, countCurrentPrices, countSuccessors, countWithdrawn } from '../store/approved-prices.ts';
import { countStoredPages } from '../store/delivery-intents.ts';
import { outboxStats } from '../store/outbox-stats.ts';
import { lastFileNamed } from '../store/push-ledger-views.ts';
import type { StateDb } from '../store/state-db.ts';
import type { DaemonCheck } from '../status/daemon-probe.ts';
import type { PlatformChanges } from './approval-steps.ts';
import type { DemoLayout } from './demo-config.ts';
import type { SampleFile } from './sample-files.ts';

export interface DemoFileSummary {
  source: string;
  name: string;
  id: number | null;
  status: string;
  rows_read: number | null;
  rows_accepted: number | null;
  rows_rejected: number | null;
  expected: SampleFile['expected'];
  report: string | null;
  rejects: string | null;
}

export interface DemoCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface DemoSummary {
  ok: boolean;
  dir: string;
  duration_ms: number;
  files: DemoFileSummary[];
  approvals: {
    on_platform: number;
    current_on_platform: number;
    stored: number;
    acknowledged: number;
    ack_pending: number;
    conflicts: number;
    amended: number;
    cancelled: number;
    new_after_first_pull: number;
    pull_pages: number;
  };
  outbox: { database: string; feed_rows: number; withdrawals: number; current_prices: number };
  store_files: { store: string; folder: string; files: number; rows: number }[];
  daemon: DaemonCheck;
  checks: DemoCheck[];
  paths: {
    config: string;
    log: string;
    reports: string[];
    rejects: string[];
    database: string;
    example_query: string;
    store_files: string;
  };
}

const exists = (path: string | null): Promise<string | null> => (path === null ? Promise.resolve(null) : stat(path).then(() => path, () => null));

async function fileSummaries(db: StateDb, samples: readonly SampleFile[]): Promise<DemoFileSummary[]> {
  const out: DemoFileSummary[] = [];
  for (const sample of samples) {
    const row = await lastFileNamed(db, sample.source, sample.name);
    const final = row?.final_path ?? null;
    out.push({
      source: sample.source,
      name: sample.name,
      id: row?.id ?? null,
      status: row?.status ?? 'not claimed',
      rows_read: row?.rows_read ?? null,
      rows_accepted: row?.rows_accepted ?? null,
      rows_rejected: row?.rows_rejected ?? null,
      expected: sample.expected,
      report: await exists(final === null ? null : `${final}.report.json`),
      rejects: await exists(final === null ? null : `${final}.rejects.csv`),
    });
  }
  return out;
}

interface StoreFilesScan {
  stores: { store: string; folder: string; files: number; rows: number }[];
  rows: number;
  /** Distinct feed seqs over all files: equal to `rows` when no row is in two files. */
  seqs: number;
}

/** Reads back every per-store CSV file: rows (lines after the header) and their seqs (first column). */
async function storeFiles(dir: string): Promise<StoreFilesScan> {
  const scan: StoreFilesScan = { stores: [], rows: 0, seqs: 0 };
  const seqs = new Set<string>();
  const folders = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const folder of folders.filter((f) => f.isDirectory()).map((f) => f.name).sort()) {
    const names = (await readdir(join(dir, folder))).filter((n) => /^prices-\d+-\d+\.csv$/.test(n));
    let rows = 0;
    for (const name of names) {
      const lines = (await readFile(join(dir, folder, name), 'utf8')).split('\r\n').filter((l) => l !== '').slice(1);
      rows += lines.length;
      for (const line of lines) seqs.add(line.slice(0, line.indexOf(',')));
    }
    scan.stores.push({ store: folder, folder: join(dir, folder), files: names.length, rows });
    scan.rows += rows;
  }
  scan.seqs = seqs.size;
  return scan;
}


export interface SummaryInput {
  readonly db: StateDb;
  readonly layout: DemoLayout;
  /** Where the state database is (for the summary's example query). */
  readonly database: string;
  readonly samples: readonly SampleFile[];
  readonly changes: PlatformChanges;
  readonly control: SandboxControl;
  readonly daemon: DaemonCheck;
  readonly durationMs: number;
}

export async function demoSummary(input: SummaryInput): Promise<DemoSummary> {
  const { db, changes } = input;
  const files = await fileSummaries(db, input.samples);
  const platform = input.control.world.approvals.all();
  const current = platform.filter((a) => a.cancelled_at === null && a.supersededBy === null);
  let acknowledgedCurrent = 0;
  for (const a of current) if ((await getAckState(db, a.id))?.status === 'acknowledged') acknowledgedCurrent += 1;
  const stats = await outboxStats(db);
  const feedRows = stats.feed_rows;
  const withdrawals = await countWithdrawn(db, changes.cancelled);
  const successors = await countSuccessors(db, changes.amended);
  const stale = await countCurrentAmong(db, [...changes.amended, ...changes.cancelled]);

  const store = await storeFiles(input.layout.outboxDir);
  const checks: DemoCheck[] = files.map((f) => ({
    name: `${f.name} (${f.source})`,
    ok: f.status === 'done' && f.rows_read === f.expected.read && f.rows_accepted === f.expected.accepted && f.rows_rejected === f.expected.rejected,
    detail: `${f.status}: ${f.rows_read ?? '-'} read, ${f.rows_accepted ?? '-'} accepted, ${f.rows_rejected ?? '-'} rejected (expected ${f.expected.read}/${f.expected.accepted}/${f.expected.rejected})`,
  }));
  const overAcked = platform.filter((a) => a.ackCount > 1).length;
  const check = (name: string, ok: boolean, detail: string) => checks.push({ name, ok, detail });
  check('every current price on the platform is in the outbox, acknowledged', acknowledgedCurrent === current.length, `${acknowledgedCurrent} of ${current.length}`);
  check('no id acknowledged twice, none left waiting', overAcked === 0 && stats.approvals.ack_pending === 0 && stats.approvals.conflict === 0, `${overAcked} acknowledged twice, ${stats.approvals.ack_pending} waiting, ${stats.approvals.conflict} conflicts`);
  check('amendments supersede their predecessors', successors === changes.amended.length && stale === 0, `${successors} of ${changes.amended.length} successors stored; ${stale} changed versions still in current_prices`);
  check('cancellations are withdrawn in the feed', withdrawals === changes.cancelled.length, `${withdrawals} of ${changes.cancelled.length}`);
  const fileCount = store.stores.reduce((n, f) => n + f.files, 0);
  check('every feed row is in exactly one per-store file', store.rows === feedRows && store.seqs === feedRows, `${store.rows} rows (${store.seqs} distinct seqs) in ${fileCount} files for ${feedRows} feed rows`);
  check('the daemon was ready', input.daemon.state === 'ready', `${input.daemon.state}${input.daemon.reasons.length > 0 ? `: ${input.daemon.reasons.join('; ')}` : ''}`);

  const database = input.database;
  return {
    ok: checks.every((c) => c.ok),
    dir: input.layout.dir,
    duration_ms: input.durationMs,
    files,
    approvals: {
      on_platform: platform.length,
      current_on_platform: current.length,
      stored: stats.approvals.total,
      acknowledged: stats.approvals.acknowledged,
      ack_pending: stats.approvals.ack_pending,
      conflicts: stats.approvals.conflict,
      amended: changes.amended.length,
      cancelled: changes.cancelled.length,
      new_after_first_pull: changes.injected,
      pull_pages: await countStoredPages(db),
    },
    outbox: { database, feed_rows: feedRows, withdrawals: stats.withdrawals, current_prices: await countCurrentPrices(db) },
    store_files: store.stores,
    daemon: input.daemon,
    checks,
    paths: {
      config: input.layout.configFile,
      log: input.layout.logFile,
      reports: files.flatMap((f) => (f.report ? [f.report] : [])),
      rejects: files.flatMap((f) => (f.rejects ? [f.rejects] : [])),
      database,
      example_query: `sqlite3 -readonly ${database} "SELECT store_key, item_id, approved_price, effective_date FROM current_prices ORDER BY store_key, item_id LIMIT 10"`,
      store_files: input.layout.outboxDir,
    },
  };
}
