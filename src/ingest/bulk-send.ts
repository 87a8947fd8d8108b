/**
 * Sends a file's valid rows in bulk batches and checkpoints each batch once the API answered for it.
 *
 * - Batches are cut every `batch_size` valid rows, the same way on every read of the same file, so a restart finds
 *   batch k where it was and skips the committed ones (re-sending an uncommitted batch is safe: bulk is idempotent
 *   per business key).
 * - Up to `maxInFlight` batches at once (api.max_connections); rows sharing a business key keep file order.
 * - a batch never holds two rows of a key where the entity refuses that (duplicate-keys.ts: the later row wins,
 *   the earlier is recorded as superseded).
 * - Per-row results come back in index order and are mapped to the rows' line numbers.
 * - On the first failure (the API still failing after the client's retries, a rejected key, a drain) no further
 *   batch is started; batches in flight finish and commit; the error is rethrown. The file stays in processing/.
 */
import type { ApiClient } from '../api/client.ts';
import { BUSINESS_KEYS, type BulkResponse, type Entity } from '../api/schemas/index.ts';
import type { StateDb } from '../store/state-db.ts';
import { commitBatch, committedBatches, lastBatchIndex, recordRejects, type RejectRow } from '../store/push-ledger.ts';
import type { RowFates } from './delta/delta-plan.ts';
import type { RowOutcome } from './read/index.ts';
import { supersededInBatch, supersededMessage, supersedesDuplicates } from './duplicate-keys.ts';
import { KeyOrder } from './key-order.ts';

type Row = Readonly<Record<string, unknown>>;

/** Rows not written (rejects, superseded) held per batch before they are recorded on their own. */
const REJECTS_FLUSH = 1000;

export interface BulkSendContext {
  readonly db: StateDb;
  readonly client: ApiClient;
  /** Batches in flight at once (api.max_connections). */
  readonly maxInFlight: number;
  /** Aborted on drain: no new batch is started; batches in flight are answered and committed first. */
  readonly signal?: AbortSignal | undefined;
  /** Called after each batch is committed (progress, metrics). */
  readonly onBatch?: (batch: { index: number; sent: number; accepted: number; failed: number }) => void;
}

export interface BulkFile {
  readonly id: number;
  readonly entity: Entity;
  readonly batchSize: number;
  /**
   * Delta push (src/ingest/delta/delta-plan.ts): the fate of each valid row, decided here with the others, and what
   * to remember of the rows the API accepts. Batches are then numbered after the ones committed before a restart,
   * none is skipped by its number: the comparison already knows which rows were sent.
   */
  readonly fates?: RowFates | undefined;
}

/** What the send pass counted besides the batches. */
export interface BulkOutcome {
  /** Valid rows not sent because the API already holds them (delta push). */
  readonly unchanged: number;
}

interface PendingBatch {
  index: number;
  rows: Row[];
  lines: number[];
  raws: (readonly string[])[];
  /** Local rejects found while this batch filled up: committed with it. */
  rejects: RejectRow[];
}

export function bulkOf(client: ApiClient, entity: Entity): (rows: readonly Row[], signal?: AbortSignal) => Promise<BulkResponse> {
  // The rows were validated with the entity's write schema by the reader; the casts only restate that.
  switch (entity) {
    case 'products':
      return (rows, signal) => client.products.bulk(rows as never, { signal });
    case 'product_store':
      return (rows, signal) => client.productStore.bulk(rows as never, { signal });
    case 'transactions':
      return (rows, signal) => client.transactions.bulk(rows as never, { signal });
    case 'competitor_prices':
      return (rows, signal) => client.competitorPrices.bulk(rows as never, { signal });
  }
}

/** Drops the rows a later row of the batch supersedes (duplicate-keys.ts); returns them as superseded rows. */
function supersede(batch: PendingBatch, entity: Entity, keyOf: (row: Row) => string): RejectRow[] {
  if (!supersedesDuplicates(entity)) return [];
  const losers = supersededInBatch(batch.rows.map(keyOf));
  if (losers.size === 0) return [];
  const superseded: RejectRow[] = [];
  for (const [i, winner] of losers) {
    const message = supersededMessage(entity, batch.lines[winner] as number);
    superseded.push({ line: batch.lines[i] as number, stage: 'superseded', field: null, code: 'superseded', message, raw: batch.raws[i] ?? [] });
  }
  const kept = batch.rows.map((_, i) => i).filter((i) => !losers.has(i));
  batch.rows = kept.map((i) => batch.rows[i] as Row);
  batch.lines = kept.map((i) => batch.lines[i] as number);
  batch.raws = kept.map((i) => batch.raws[i] ?? []);
  return superseded;
}

/** `rows`: the reader's outcomes in chunks (RowReader.chunks), in file order. */
export async function sendBulk(ctx: BulkSendContext, file: BulkFile, rows: AsyncIterable<readonly RowOutcome<Row>[]>): Promise<BulkOutcome> {
  const fates = file.fates;
  const committed = fates ? new Set<number>() : committedBatches(ctx.db, file.id);
  let unchanged = 0;
  const send = bulkOf(ctx.client, file.entity);
  const keyOf = BUSINESS_KEYS[file.entity];
  const order = new KeyOrder();
  const inFlight = new Set<Promise<void>>();
  // Set by a batch's task: a holder object, as TypeScript does not see assignments made inside callbacks.
  const first: { failure: Error | null } = { failure: null };
  let batch: PendingBatch = { index: fates ? lastBatchIndex(ctx.db, file.id) + 1 : 0, rows: [], lines: [], raws: [], rejects: [] };

  const sendBatch = async (b: PendingBatch, superseded: RejectRow[]): Promise<void> => {
    // Not given the drain signal: a batch in flight is finished and committed; a drain only stops new batches.
    const response = await send(b.rows);
    const apiRejects: RejectRow[] = [];
    for (const result of response.results) {
      if (result.ok) continue;
      apiRejects.push({
        line: b.lines[result.index] as number,
        stage: 'api',
        field: null,
        code: result.code ?? 'rejected',
        message: result.message ?? 'refused by the API',
        raw: b.raws[result.index] ?? [],
      });
    }
    const checkpoint = {
      index: b.index,
      firstLine: Math.min(...b.lines, ...superseded.map((r) => r.line)),
      lastLine: Math.max(...b.lines, ...superseded.map((r) => r.line)),
      sent: b.rows.length,
      accepted: b.rows.length - apiRejects.length,
      failed: apiRejects.length,
      superseded: superseded.length,
    };
    const remember = fates
      ? () => {
          const accepted = response.results.filter((r) => r.ok).map((r) => ({ record: b.rows[r.index] as Row, id: r.id ?? null }));
          fates.accepted(accepted);
        }
      : undefined;
    commitBatch(ctx.db, file.id, checkpoint, [...b.rejects, ...superseded, ...apiRejects], remember);
    ctx.onBatch?.({ index: b.index, sent: checkpoint.sent, accepted: checkpoint.accepted, failed: checkpoint.failed });
  };

  const flush = async (): Promise<void> => {
    const b = batch;
    batch = { index: b.index + 1, rows: [], lines: [], raws: [], rejects: [] };
    if (committed.has(b.index)) {
      recordRejects(ctx.db, file.id, b.rejects); // found again on this read: already there, or lost with a crash
      return;
    }
    const superseded = supersede(b, file.entity, keyOf);
    while (inFlight.size >= ctx.maxInFlight) await Promise.race(inFlight);
    // A drain that came while this batch waited for a free connection: it is not started (its rows are read again).
    if (first.failure !== null || ctx.signal?.aborted === true) return;
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    await order.acquire(new Set(b.rows.map(keyOf)), done);
    const task: Promise<void> = sendBatch(b, superseded)
      .catch((error: unknown) => {
        first.failure ??= error instanceof Error ? error : new Error(`batch ${b.index} failed`, { cause: error });
      })
      .finally(() => {
        finish();
        inFlight.delete(task);
      });
    inFlight.add(task);
  };

  try {
    reading: for await (const chunk of rows) {
      for (const outcome of chunk) {
        if (first.failure !== null || ctx.signal?.aborted) break reading;
        if (batch.rejects.length >= REJECTS_FLUSH) {
          // Recorded early, not with the batch: rows not written are keyed by line, so a re-read after a crash
          // finds them again without counting them twice, and memory stays bounded in a file of rejects.
          recordRejects(ctx.db, file.id, batch.rejects);
          batch.rejects = [];
        }
        if (outcome.kind === 'reject') {
          const { line, field, code, message, rawFields } = outcome;
          batch.rejects.push({ line, stage: 'local', field, code, message, raw: rawFields });
          continue;
        }
        const fate = fates?.fateOf(outcome.line) ?? 'send';
        if (fate !== 'send') {
          if (fate === 'unchanged') unchanged += 1;
          continue;
        }
        batch.rows.push(outcome.record);
        batch.lines.push(outcome.line);
        batch.raws.push(outcome.rawFields);
        if (batch.rows.length >= file.batchSize) await flush();
      }
    }
    if (first.failure === null && !ctx.signal?.aborted) {
      if (batch.rows.length > 0) await flush();
      else recordRejects(ctx.db, file.id, batch.rejects);
    }
  } finally {
    await Promise.all(inFlight);
  }
  if (first.failure !== null) throw first.failure;
  if (ctx.signal?.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('push stopped');
  return { unchanged };
}
