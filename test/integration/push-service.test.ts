/**
 * The daemon's push side: watchers feed per-source queues; unfinished files are resumed before new ones; stop()
 * drains. A ManualClock drives the stability window; the sandbox is real.
 */
import { readdirSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SourceSchema } from '../../src/config/source-schema.ts';
import { claimFile } from '../../src/ingest/file/claim.ts';
import { PushService } from '../../src/ingest/push-service.ts';
import type { FileResult } from '../../src/ingest/file/push-file.ts';
import { getFile } from '../../src/store/push-ledger.ts';
import { untilSeen, writeWhole } from '../support/inbox-seen.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { pushHarness } from '../support/push-harness.ts';
import { openForFile } from '../support/open-for-file.ts';
import { until } from '../support/test-logger.ts';

const clock = new ManualClock();
const h = openForFile(() => pushHarness({ clock }));

describe('PushService', () => {
  it('resumes a file left in processing/, then pushes new files of two sources', async () => {
    const txInbox = join(h.dir, 'svc', 'tx');
    const prodInbox = join(h.dir, 'svc', 'products');
    await mkdir(txInbox, { recursive: true });
    await mkdir(prodInbox, { recursive: true });
    const tx = SourceSchema.parse({ name: 'tx', entity: 'transactions', path: txInbox, stable_ms: 2000 });
    const products = SourceSchema.parse({ name: 'products', entity: 'products', path: prodInbox, stable_ms: 2000 });

    // A file claimed by an earlier run that died before sending anything.
    await writeFile(join(txInbox, 'left-over.csv'), 'transaction_id,item_id,transaction_timestamp\nL1,A,2026-11-20T08:00:00Z\n');
    const claim = await claimFile(h.db, { name: 'tx', entity: 'transactions', mode: 'bulk', inbox: txInbox, batchSize: 1000 }, join(txInbox, 'left-over.csv'));
    expect(claim.kind).toBe('claimed');

    const results: { source: string; result: FileResult }[] = [];
    const service = new PushService({
      deps: h.deps,
      sources: [tx, products],
      clock,
      logger: h.deps.logger,
      onResult: (source, result) => results.push({ source, result }),
    });
    await service.start();
    await until(() => results.length === 1, 'the left-over file to be resumed');
    expect(results[0]?.result.outcome).toBe('done');

    await writeWhole(join(txInbox, 'new.csv'), 'transaction_id,item_id,transaction_timestamp\nN1,A,2026-11-20T09:00:00Z\n');
    await writeWhole(join(prodInbox, 'p.csv'), 'item_id,sku\nP1,P1\n');
    await untilSeen(clock, () => service.status().every((s) => s.waitingToBeStable === 1), 'both files to be seen');
    await clock.advance(2000);
    await until(() => results.length === 3, 'both new files to be pushed');
    expect(results.map((r) => `${r.source}:${r.result.outcome}`).sort()).toEqual(['products:done', 'tx:done', 'tx:done']);
    expect(h.sandbox.control.state({ keys: true }).transactions.keys).toEqual(expect.arrayContaining(['L1', 'N1']));
    expect(await readdir(join(txInbox, 'processing'))).toEqual([]);
    if (claim.kind === 'claimed') expect((await getFile(h.db, claim.fileId))?.status).toBe('done');

    await service.stop();
    expect(service.status().every((s) => s.watcher === 'closed' && !s.busy)).toBe(true);
  });

  // Found under load by the security suite: the path stayed "queued" until the first push returned, so a new file
  // handed over under the same name in that window was dropped and never pushed.
  it('a file written under the same name while the previous one is still being pushed is pushed after it', { timeout: 120_000 }, async () => {
    const inbox = join(h.dir, 'svc', 'same-name');
    await mkdir(inbox, { recursive: true });
    const source = SourceSchema.parse({ name: 'same', entity: 'transactions', path: inbox, stable_ms: 2000 });
    const results: FileResult[] = [];
    const service = new PushService({ deps: h.deps, sources: [source], clock, logger: h.deps.logger, onResult: (_s, r) => results.push(r) });
    await service.start();
    // The first file's batch takes 5 s (real time) at the sandbox: long enough to hand the second over meanwhile,
    // even on a loaded machine (checked below: nothing was pushed yet when the second was handed over).
    h.sandbox.control.setFaults({ latency_ms: 5000, paths: ['POST /v1/transactions/bulk'] });
    try {
      // Each written whole: seen half-written, it would wait for stable_ms more of a clock the test moves only once.
      await writeWhole(join(inbox, 'daily.csv'), 'transaction_id,item_id,transaction_timestamp\nS1,A,2026-11-20T08:00:00Z\n');
      await untilSeen(clock, () => service.status()[0]?.waitingToBeStable === 1, 'the first file to be seen');
      await clock.advance(2000);
      await until(() => readdirSafe(join(inbox, 'processing')).length === 1, 'the first file to be claimed', 60_000);
      await writeWhole(join(inbox, 'daily.csv'), 'transaction_id,item_id,transaction_timestamp\nS2,A,2026-11-20T09:00:00Z\n');
      await untilSeen(clock, () => service.status()[0]?.waitingToBeStable === 1, 'the second file to be seen');
      await clock.advance(2000);
      await until(() => service.status()[0]?.waitingToBeStable === 0, 'the second file to be handed over', 60_000);
      expect(results, 'the second file was handed over while the first was still being pushed').toHaveLength(0);
    } finally {
      h.sandbox.control.setFaults(null);
    }
    await until(() => results.length === 2, 'both files to be pushed', 60_000);
    expect(results.map((r) => r.outcome)).toEqual(['done', 'done']);
    expect(h.sandbox.control.state({ keys: true }).transactions.keys).toEqual(expect.arrayContaining(['S1', 'S2']));
    await service.stop();
  });

  // Found in the chaos suite's evidence: a deferred file went back to the end of the queue, so a newer export of
  // the same source was sent first and then overwritten by the older one at its retry.
  it('a deferred file keeps its place: a newer file of its source waits behind it and is sent after it', { timeout: 120_000 }, async () => {
    const inbox = join(h.dir, 'svc', 'ordered');
    await mkdir(inbox, { recursive: true });
    // Without delta: its brakes would hold a file that changes the one known key (not what this test is about).
    const source = SourceSchema.parse({ name: 'ordered', entity: 'products', path: inbox, stable_ms: 2000, delta: false });
    const results: FileResult[] = [];
    const service = new PushService({ deps: h.deps, sources: [source], clock, logger: h.deps.logger, onResult: (_s, r) => results.push(r) });
    await service.start();
    const status = () => service.status()[0];
    h.sandbox.control.setFaults({ error_503: 1, paths: ['POST /v1/products/bulk'] });
    try {
      await writeWhole(join(inbox, 'monday.csv'), 'item_id,sku,product_name\nORD1,ORD1,monday\n');
      await untilSeen(clock, () => status()?.waitingToBeStable === 1, 'monday.csv to be seen');
      await clock.advance(2000);
      // The client's backoff waits (1 s, 2 s, 4 s, 8 s) run on the test's clock: move it a second at a time.
      for (let step = 0; step < 120 && results.length === 0; step += 1) {
        await new Promise((r) => setTimeout(r, 10));
        if (results.length === 0 && clock.waiting > 0) await clock.advance(1000);
      }
      await until(() => results.length === 1, 'monday.csv to be deferred');
      expect(results[0]?.outcome).toBe('deferred');

      await writeWhole(join(inbox, 'tuesday.csv'), 'item_id,sku,product_name\nORD1,ORD1,tuesday\n');
      await untilSeen(clock, () => status()?.waitingToBeStable === 1 || status()?.queued === 2, 'tuesday.csv to be seen');
      await clock.advance(2000);
      await until(() => status()?.queued === 2, 'tuesday.csv to be queued behind the deferred monday.csv');
      expect(status()?.busy).toBe(false);
      expect(results, 'nothing was tried while monday.csv waits for its retry').toHaveLength(1);
    } finally {
      h.sandbox.control.setFaults(null);
    }
    await clock.advance(30_000); // monday.csv's retry time
    await until(() => results.filter((r) => r.outcome === 'done').length === 2, 'both files to be pushed', 60_000);
    const done = results.flatMap((r) => (r.outcome === 'done' ? [r.file.original_name] : []));
    expect(done, 'the files of a source are sent in the order they came').toEqual(['monday.csv', 'tuesday.csv']);
    await service.stop();
  });
});

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
