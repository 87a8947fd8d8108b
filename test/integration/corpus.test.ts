/**
 * The bad input corpus (test/fixtures/bad/, issue 7) through one `pricing-agent run` daemon: every file of the
 * manifest is dropped into the source it names, and its report must say what the manifest expects (a file-level
 * failure code, or the row counts and the reject code of each rejected line). Three entries are dynamic: a file
 * still being written when the agent starts, and a file renamed or deleted inside processing/ while it is read.
 * The daemon keeps running through all of it, a good file dropped alongside is unaffected, no row of a failed
 * file and no rejected row reaches the sandbox, and every accepted row does.
 */
import { copyFile, mkdir, open, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportsIn, rejectRecords, type FoundReport } from '../chaos/evidence.ts';
import { daemonHarness, untilReady, type DaemonHarness, type DaemonProcess } from '../support/daemon-harness.ts';

const BAD = new URL('../fixtures/bad/', import.meta.url).pathname;

type Expected =
  | { status: 'failed'; code: string }
  | { status: 'done'; rows: { read: number; accepted: number; rejected: number; superseded: number }; reject_codes: Record<string, string> };

interface Entry {
  file: string;
  source: string;
  expected: Expected;
  why: string;
  dynamic?: 'still-written-at-start' | 'renamed-while-read' | 'deleted-while-read';
  generate?: { rows: number };
}

interface Manifest {
  sources: Record<string, Record<string, unknown>>;
  files: Entry[];
}

const manifest = JSON.parse(await readFile(join(BAD, 'manifest.json'), 'utf8')) as Manifest;
let h: DaemonHarness;
let daemon: DaemonProcess;
const reports = new Map<string, FoundReport>();
const inbox = (source: string) => join(h.dir, 'corpus', source);

function sourceYaml(name: string, options: Record<string, unknown>): string {
  const lines = [`  - name: ${name}`, `    path: ./corpus/${name}`];
  for (const [key, value] of Object.entries({ stable_ms: 200, ...options })) lines.push(`    ${key}: ${JSON.stringify(value)}`);
  return `${lines.join('\n')}\n`;
}

function competitorRows(prefix: string, rows: number): string {
  const out = ['competitor_name,item_id,observed_at,regular_price,effective_price'];
  for (let i = 0; i < rows; i += 1) out.push(`Aldi,${prefix}-${i},2026-11-20T08:00:00Z,${1 + (i % 9)}.49,${1 + (i % 9)}.29`);
  return `${out.join('\n')}\n`;
}

/** The ledger row of `name` once it is started with at least one committed batch; its processing path. */
function startedWithBatches(dbPath: string, name: string): string | null {
  try {
    const db = new Database(dbPath, { readonly: true, fileMustExist: true });
    try {
      const row = db
        .prepare(`SELECT f.processing_path AS path, (SELECT count(*) FROM push_batches b WHERE b.file_id = f.id) AS batches FROM push_files f WHERE f.original_name = ? AND f.started_at IS NOT NULL`)
        .get(name) as { path: string; batches: number } | undefined;
      return row && row.batches > 0 ? row.path : null;
    } finally {
      db.close();
    }
  } catch {
    return null;
  }
}

/**
 * A producer that keeps appending rows through one open descriptor (as an ERP export in progress does). Resolves
 * once the file is open and its header written; `done` resolves after the last row.
 */
async function slowWriter(path: string, rows: number, everyMs: number): Promise<{ done: Promise<void> }> {
  const handle = await open(path, 'w');
  await handle.write('transaction_id,item_id,transaction_timestamp\n');
  let written = 0;
  let chain: Promise<unknown> = Promise.resolve();
  const done = new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      const line = `COR-SW-${written},A,2026-11-20T08:00:00Z\n`;
      written += 1;
      // One write after the other, and the timer stops at once: under load a tick can come before a write ends.
      chain = chain.then(() => handle.write(line));
      if (written < rows) return;
      clearInterval(timer);
      chain.then(() => handle.close()).then(resolve, (error: unknown) => reject(error instanceof Error ? error : new Error(String(error))));
    }, everyMs);
  });
  return { done };
}

/** Polls the ledger until `name` is sending; its processing path. */
async function whenSending(dbPath: string, name: string): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const path = startedWithBatches(dbPath, name);
    if (path !== null) return path;
    if (Date.now() > deadline) throw new Error(`${name} was not read and sending within 30 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeAll(async () => {
  h = await daemonHarness();
  const sources = Object.entries(manifest.sources).map(([name, options]) => sourceYaml(name, options));
  await h.writeConfig(
    `api:\n  base_url: ${h.sandbox.url}\n  key_file: ./api-key\nstate:\n  dir: ./state\nhttp:\n  port: 0\nlog:\n  level: info\nsources:\n${sources.join('')}`,
  );
  for (const name of Object.keys(manifest.sources)) await mkdir(inbox(name), { recursive: true });
  // Slow sends for the two files changed while they are read, so there is a moment to change them.
  h.sandbox.control.setFaults({ latency_ms: 20, paths: ['POST /v1/competitor_prices/bulk'] });

  const late = manifest.files.find((e) => e.dynamic === 'still-written-at-start');
  if (!late?.generate) throw new Error('the manifest has no still-written-at-start entry');
  const writing = await slowWriter(join(inbox(late.source), late.file), late.generate.rows, 100);
  let writerDone = false;
  void writing.done.then(() => (writerDone = true));
  daemon = h.start();
  await untilReady(h);
  // The writer is still appending now that the agent is ready (else this entry would prove nothing).
  expect(writerDone).toBe(false);

  for (const entry of manifest.files) {
    if (entry.dynamic === undefined) await copyFile(join(BAD, entry.file), join(inbox(entry.source), entry.file));
  }
  await writeFile(join(inbox('tx'), 'good.csv'), 'transaction_id,item_id,transaction_timestamp\nCOR-GOOD-1,A,2026-11-20T08:00:00Z\n');
  const dbPath = join(h.dir, 'state', 'pricing-agent.db');
  for (const entry of manifest.files) {
    if (entry.dynamic !== 'renamed-while-read' && entry.dynamic !== 'deleted-while-read') continue;
    const prefix = entry.dynamic === 'renamed-while-read' ? 'COR-RN' : 'COR-DL';
    await writeFile(join(inbox(entry.source), entry.file), competitorRows(prefix, entry.generate?.rows ?? 0));
  }
  for (const entry of manifest.files) {
    if (entry.dynamic !== 'renamed-while-read' && entry.dynamic !== 'deleted-while-read') continue;
    const path = await whenSending(dbPath, entry.file);
    if (entry.dynamic === 'renamed-while-read') await rename(path, `${path}.renamed-by-someone`);
    else await unlink(path);
  }
  await writing.done;

  const wanted = [...manifest.files.map((e) => ({ source: e.source, file: e.file })), { source: 'tx', file: 'good.csv' }];
  const deadline = Date.now() + 90_000;
  while (reports.size < wanted.length && Date.now() < deadline) {
    for (const w of wanted) {
      if (reports.has(w.file)) continue;
      const found = (await reportsIn(inbox(w.source))).find((r) => r.file === w.file);
      if (found) reports.set(w.file, found);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}, 180_000);

afterAll(async () => {
  await h.close();
});

describe('the bad input corpus through one daemon', () => {
  it('has at least 30 files, each with an expected outcome', () => {
    expect(manifest.files.length).toBeGreaterThanOrEqual(30);
  });

  it.each(manifest.files.map((e) => [e.file, e] as const))('%s', async (_name, entry) => {
    const report = reports.get(entry.file);
    expect(report, `a report for ${entry.file} (${entry.why})`).toBeDefined();
    if (!report) return;
    const expected = entry.expected;
    expect(report.status, JSON.stringify(report.error)).toBe(expected.status);
    if (expected.status === 'failed') {
      expect(report.error?.code).toBe(expected.code);
      expect(report.path).toContain(`${entry.source}/failed/`);
      return;
    }
    expect(report.rows).toMatchObject(expected.rows);
    const rows = report.rows;
    if (rows) expect(rows.accepted + rows.rejected + rows.superseded).toBe(rows.read);
    const configured = manifest.sources[entry.source]?.['delimiter'];
    const delimiter = typeof configured === 'string' ? configured : ',';
    const rejects = report.rejectsFile ? await rejectRecords(report.rejectsFile, delimiter) : [];
    const codes = Object.fromEntries(rejects.map((r) => [r[0] ?? '', r.at(-2) ?? '']));
    expect(codes).toEqual(expected.reject_codes);
  });

  it('keeps running, ready, with the good file done and only valid rows in the sandbox', async () => {
    expect(daemon.child.exitCode).toBeNull();
    expect((await h.get('/readyz')).status).toBe(200);
    expect(reports.get('good.csv')?.status).toBe('done');
    const state = h.sandbox.control.state({ keys: true });
    const all = [
      ...(state.transactions.keys ?? []),
      ...(state.products.keys ?? []),
      ...(state.product_store.keys ?? []).map((k) => k.item_id),
      ...(state.competitor_prices.keys ?? []).map((k) => k.item_id ?? ''),
    ];
    expect(all.filter((k) => k.startsWith('BAD-')), 'no row of a failed file reached the API').toEqual([]);
    expect(new Set(all.filter((k) => k.startsWith('COR-RN-'))).size).toBe(20_000);
    expect(new Set(all.filter((k) => k.startsWith('COR-DL-'))).size).toBe(20_000);
    expect(all.filter((k) => k.startsWith('COR-SW-'))).toHaveLength(60);
    expect(all).toContain('COR-GOOD-1');
    // The files changed while they were read are closed, with one clear line each in the log.
    const removed = daemon.output().split('\n').filter((l) => l.includes('removed from processing/ while it was read'));
    expect(removed).toHaveLength(2);
    expect(daemon.output()).not.toContain('push failed unexpectedly');
    const db = new Database(join(h.dir, 'state', 'pricing-agent.db'), { readonly: true });
    try {
      expect(db.prepare(`SELECT original_name FROM push_files WHERE finished_at IS NULL`).pluck().all()).toEqual([]);
    } finally {
      db.close();
    }
    // Every processing/ folder is empty again but for what somebody else put there.
    for (const name of Object.keys(manifest.sources)) {
      const left = (await readdir(join(inbox(name), 'processing')).catch(() => [] as string[])).filter((n) => !n.endsWith('.renamed-by-someone'));
      expect(left, `processing/ of ${name}`).toEqual([]);
    }
  });
});
