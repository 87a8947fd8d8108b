/**
 * Sends a file's valid rows in bulk batches and checkpoints each batch once the API answered for it.
 *
 * - Batches are cut every `batch_size` valid rows, the same way on every read of the same file, so a restart finds
 *   batch k where it was and skips the committed ones (re-sending an uncommitted batch is safe: bulk is idempotent
 *   per business key).
 * - Up to `maxInFlight` batches at once (api.max_connections); rows sharing a business key keep file order.
 * - rows of the file with the same business key are never both accepted (duplicate-keys.ts): a batch never holds
 *   two; with `last`, at the end of the file the accepted rows of a key repeated across batches are superseded by the
 *   last; with `sum`, a key's first row is sent carrying the sums of its rows and the others are merged into it.
 * - Until a row is accepted one batch at a time is in flight, and a file whose first rows are all rejected is stopped
 *   (row-fate.ts).
 * - Per-row results come back in index order and are mapped to the rows' line numbers; a 422 that refuses the whole
 *   batch for rows it names makes those rows rejects and sends the rest again (bulk-refused-rows.ts).
 * - On the first failure (the API still failing after the client's retries, a rejected key, a drain) no further
 *   batch is started; batches in flight finish and commit; the error is rethrown. The file stays in processing/.
 */
import type { ApiClient } from '../../api/client.ts';
import { BUSINESS_KEYS, type BulkResponse, type Entity } from '../../api/schemas/index.ts';
import type { DuplicateKeyPolicy } from '../../config/mapping-schema.ts';
import type { StateDb } from '../../store/state-db.ts';
import { commitBatch, committedBatches, keyHashesOf, lastBatchIndex, recordRejects, type RejectRow } from '../../store/push-ledger.ts';
import type { LineCount, RowFates } from '../delta/delta-plan.ts';
import type { RowOutcome, RowsUnread } from '../read/index.ts';
import {
  BatchKeyHashes,
  firstPassDecisions,
  linesWithRepeatedHashes,
  loserRow,
  losersInBatch,
  supersededAfterSend,
  supersededMessage,
  type KeyDecisions,
  type Loser,
  type ReopenRows,
} from '../file/duplicate-keys.ts';
import { KeyOrder } from '../file/key-order.ts';
import { sendRefusingNamedRows } from './bulk-refused-rows.ts';
import { fileCounts, Probation, localReject, stoppedEarly } from '../file/row-fate.ts';

type Row = Readonly<Record<string, unknown>>;

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
  readonly duplicateKeys: DuplicateKeyPolicy;
  /**
   * Delta push (src/ingest/delta/delta-plan.ts): the fate of each valid row (sent, or unchanged: the API holds it as
   * it is), decided here with the others, and what to remember of the rows the API accepts. Batches are then numbered
   * after the ones committed before a restart and none is skipped by its number (the comparison knows which rows were
   * sent or counted: every row within a committed batch's lines, delta-plan.ts), and unchanged rows are counted by the
   * batch they were found in, once.
   */
  readonly fates?: RowFates | undefined;
  /**
   * Rows accepted by the batches committed before this attempt (a resumed file; 0 for a new claim): its probation
   * starts from them. The file's run knows them (file-run.ts), so they are not asked of the ledger here.
   */
  readonly acceptedBefore: number;
  /** Batches committed before this attempt (0 for a new claim): with none, none is asked of the ledger. */
  readonly batchesBefore: number;
}

interface PendingBatch {
  index: number;
  rows: Row[];
  lines: number[];
  raws: (readonly string[])[];
  /** Local rejects found while this batch filled up: committed with it. */
  rejects: RejectRow[];
  /** Rows found unchanged while this batch filled up (delta push): counted with it. */
  unchanged: number;
  /** The first and last line of those unchanged rows: part of the batch's span (a batch may hold nothing else). */
  unchangedLines: number[];
  /** Rows delta push found superseded by their key's unchanged row (RowFates.winnerOf): committed with it, not sent. */
  superseded: RejectRow[];
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

/**
 * Rows of the batch that do not count on their own for their key (duplicate-keys.ts), removed from the batch; a key's
 * first row under `sum` is replaced by the row with the key's sums. `decisions`: the first pass's (null for `last`,
 * decided within the batch, and across batches after the file: settleRepeatedKeys).
 */
function removeLosers(batch: PendingBatch, entity: Entity, keyOf: (row: Row) => string, decisions: KeyDecisions | null): RejectRow[] {
  const losers = new Map<number, Loser>();
  if (decisions !== null) {
    batch.lines.forEach((line, i) => {
      const loser = decisions.losers.get(line);
      if (loser !== undefined) losers.set(i, loser);
      const merged = decisions.merged.get(line);
      if (merged !== undefined) batch.rows[i] = merged;
    });
  } else {
    for (const [i, loser] of losersInBatch(batch.rows.map(keyOf))) {
      losers.set(i, loser.fate === 'superseded' ? { fate: 'superseded', winner: batch.lines[loser.winner] as number } : loser);
    }
  }
  if (losers.size === 0) return [];
  const rows = [...losers].map(([i, loser]) => loserRow(entity, batch.lines[i] as number, loser, batch.raws[i] ?? []));
  const kept = batch.rows.map((_, i) => i).filter((i) => !losers.has(i));
  batch.rows = kept.map((i) => batch.rows[i] as Row);
  batch.lines = kept.map((i) => batch.lines[i] as number);
  batch.raws = kept.map((i) => batch.raws[i] ?? []);
  return rows;
}

/**
 * `duplicate_keys: last`, after the last batch: accepted rows of different batches that share a key (their hashes
 * repeat, then their exact keys on a pass over the file) are superseded by the last of them. Idempotent: found again
 * on a resumed file, they are recorded once.
 */
async function settleRepeatedKeys(ctx: BulkSendContext, file: BulkFile, reopen: Reopen): Promise<void> {
  const counts = await fileCounts(ctx.db, file.id);
  const candidates = await linesWithRepeatedHashes(() => keyHashesOf(ctx.db, file.id), counts.accepted);
  if (candidates.size === 0) return;
  const keyOf = BUSINESS_KEYS[file.entity];
  const keyed = new Map<number, string>();
  const raws = new Map<number, readonly string[]>();
  const reader = await reopen();
  try {
    for await (const outcome of reader) {
      if (outcome.kind !== 'row' || !candidates.has(outcome.line)) continue;
      keyed.set(outcome.line, keyOf(outcome.record));
      raws.set(outcome.line, outcome.rawFields);
      if (keyed.size === candidates.size) break;
    }
  } finally {
    reader.close();
  }
  const superseded = [...supersededAfterSend(keyed)].map(([line, winner]): RejectRow => ({
    line,
    stage: 'superseded',
    field: null,
    code: 'superseded',
    message: supersededMessage(file.entity, winner),
    raw: raws.get(line) ?? [],
    sent: true,
  }));
  await recordRejects(ctx.db, file.id, superseded);
}

/**
 * Unchanged rows (delta push), `count` of them from line `first` to line `last`: counted with the batch that is filling
 * up. For the file's probation they are rows the API accepted, as they are, before: the file is not one of rejects
 * only, and nothing more is tracked (a file of a million unchanged rows before its first changed one would otherwise
 * keep every line in the probation's lists).
 */
function countUnchanged(batch: PendingBatch, unchanged: LineCount, probation: Probation): void {
  const { count, first, last } = unchanged;
  if (count === 0) return;
  batch.unchanged += count;
  const lines = batch.unchangedLines;
  if (lines.length === 0) {
    lines[0] = first;
    if (last !== first) lines[1] = last;
  } else lines[1] = last;
  probation.acceptedBefore(count);
}

/** Opens the source file again from its first row (a pass over the whole file, constant memory). */
export type Reopen = ReopenRows<Row>;

/**
 * `rows`: the reader's outcomes in chunks (RowReader.chunks), in file order; `reopen` reads the file again for the
 * duplicate-key passes (duplicate-keys.ts). Throws RowsRejectedError when the file is stopped early (row-fate.ts).
 */
export async function sendBulk(ctx: BulkSendContext, file: BulkFile, rows: AsyncIterable<readonly (RowOutcome<Row> | RowsUnread)[]>, reopen: Reopen): Promise<void> {
  const fates = file.fates;
  const committed = fates || file.batchesBefore === 0 ? new Set<number>() : await committedBatches(ctx.db, file.id);
  const send = bulkOf(ctx.client, file.entity);
  const keyOf = BUSINESS_KEYS[file.entity];
  const order = new KeyOrder();
  const inFlight = new Set<Promise<void>>();
  // Set by a batch's task: a holder object, as TypeScript does not see assignments made inside callbacks.
  const first: { failure: Error | null } = { failure: null };
  let batch: PendingBatch = { index: fates && file.batchesBefore > 0 ? (await lastBatchIndex(ctx.db, file.id)) + 1 : 0, rows: [], lines: [], raws: [], rejects: [], unchanged: 0, unchangedLines: [], superseded: [] };
  const decisions = file.duplicateKeys === 'last' ? null : await firstPassDecisions(reopen, file.entity, file.duplicateKeys);
  // A resumed file starts where its committed batches left its probation.
  const probation = new Probation();
  /** Reused for each run of unread lines. */
  const unchanged: LineCount = { count: 0, first: 0, last: 0 };
  probation.resume(file.acceptedBefore);

  /** Every row judged so far was rejected: decided once the batches in flight are answered (one may yet get a row accepted). */
  const stopNow = async (): Promise<boolean> => {
    await Promise.all(inFlight);
    return probation.failed;
  };

  const sendBatch = async (b: PendingBatch, decided: RejectRow[]): Promise<void> => {
    // Not given the drain signal: a batch in flight is finished and committed; a drain only stops new batches.
    const response = b.rows.length === 0 ? { results: [] } : await sendRefusingNamedRows(send, b.rows);
    const apiRejects: RejectRow[] = [];
    const hashes = new BatchKeyHashes();
    for (const result of response.results) {
      probation.judged(b.lines[result.index] as number, result.ok ? 'accepted' : 'refused');
      if (result.ok) {
        if (file.duplicateKeys === 'last') hashes.add(keyOf(b.rows[result.index] as Row), b.lines[result.index] as number);
        continue;
      }
      apiRejects.push({
        line: b.lines[result.index] as number,
        stage: 'api',
        field: null,
        code: result.code ?? 'rejected',
        message: result.message ?? 'refused by the API',
        raw: b.raws[result.index] ?? [],
      });
    }
    const lines = [...b.lines, ...b.unchangedLines, ...decided.map((r) => r.line)];
    const checkpoint = {
      index: b.index,
      firstLine: Math.min(...lines),
      lastLine: Math.max(...lines),
      sent: b.rows.length,
      accepted: b.rows.length - apiRejects.length,
      failed: apiRejects.length,
      superseded: decided.filter((r) => r.stage === 'superseded').length,
      unchanged: b.unchanged,
      keyHashes: hashes.bytes(),
    };
    const remember = fates
      ? fates.accepted(
          response.results.filter((r) => r.ok).map((r) => ({ record: b.rows[r.index] as Row, id: r.id ?? null, raw: b.raws[r.index] ?? [] })),
          response.results.filter((r) => !r.ok).map((r) => b.rows[r.index] as Row),
        )
      : undefined;
    await commitBatch(ctx.db, file.id, checkpoint, [...b.rejects, ...decided, ...apiRejects], remember);
    for (const r of decided) probation.judged(r.line, r.stage === 'local' ? 'refused' : 'other');
    ctx.onBatch?.({ index: b.index, sent: checkpoint.sent, accepted: checkpoint.accepted, failed: checkpoint.failed });
  };

  const flush = async (): Promise<void> => {
    const b = batch;
    batch = { index: b.index + 1, rows: [], lines: [], raws: [], rejects: [], unchanged: 0, unchangedLines: [], superseded: [] };
    if (committed.has(b.index)) {
      await recordRejects(ctx.db, file.id, b.rejects); // found again on this read: already there, or lost with a crash
      // Sent before a restart: none accepted (else resume() ended the probation), so refused or superseded.
      for (const line of b.lines) probation.judged(line, 'refused');
      return;
    }
    const decided = [...b.superseded, ...removeLosers(b, file.entity, keyOf, decisions)];
    // Until a row is accepted, one batch at a time: a file whose rows are all refused stops after its first ones.
    while (inFlight.size >= (probation.over ? ctx.maxInFlight : 1)) await Promise.race(inFlight);
    // A drain that came while this batch waited for a free connection: it is not started (its rows are read again).
    if (first.failure !== null || ctx.signal?.aborted === true) return;
    if (probation.failed) {
      // The rows before this batch were all rejected: nothing more is sent; its own local rejects stand.
      await recordRejects(ctx.db, file.id, [...b.rejects, ...b.superseded]);
      return;
    }
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    await order.acquire(new Set(b.rows.map(keyOf)), done);
    const task: Promise<void> = sendBatch(b, decided)
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
        if (probation.failed && (await stopNow())) break reading;
        if (outcome.kind === 'reject') {
          batch.rejects.push(localReject(outcome));
          probation.rejected(outcome.line);
          continue;
        }
        if (outcome.kind === 'unread') {
          // Rows the comparison found unchanged or sent before (delta-plan.ts `unread`), one line each, left unsplit.
          if (fates === undefined) throw new Error('unread rows without delta fates');
          fates.unchangedIn(outcome.line, outcome.endLine, unchanged);
          countUnchanged(batch, unchanged, probation);
          continue;
        }
        const fate = fates === undefined ? 'send' : fates.fateOf(outcome.line);
        if (fate !== 'send') {
          // Unchanged (the API holds it as it is), or sent and answered by an earlier attempt at this file.
          if (fate === 'unchanged') {
            unchanged.count = 1;
            unchanged.first = unchanged.last = outcome.line;
            countUnchanged(batch, unchanged, probation);
          } else if (fate === 'superseded' && fates !== undefined) {
            const loser = { fate: 'superseded', winner: fates.winnerOf(outcome.line) } as const;
            batch.superseded.push(loserRow(file.entity, outcome.line, loser, outcome.rawFields));
            if (batch.superseded.length >= file.batchSize) await flush();
          }
          continue;
        }
        batch.rows.push(outcome.record);
        batch.lines.push(outcome.line);
        batch.raws.push(outcome.rawFields);
        probation.valid(outcome.line);
        if (batch.rows.length >= file.batchSize) await flush();
      }
    }
    if (first.failure === null && !ctx.signal?.aborted) {
      // Stopped early, the filling batch holds no valid row (every row judged was rejected): only its rejects remain.
      // A delta file's last unchanged rows are committed in a batch of their own (nothing is sent for it).
      if (batch.rows.length > 0 || batch.unchanged > 0 || batch.superseded.length > 0) await flush();
      else await recordRejects(ctx.db, file.id, batch.rejects);
    }
  } finally {
    await Promise.all(inFlight);
  }
  if (first.failure !== null) throw first.failure;
  if (ctx.signal?.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('push stopped');
  if (probation.failed) throw stoppedEarly(probation);
  if (file.duplicateKeys === 'last') await settleRepeatedKeys(ctx, file, reopen);
}
