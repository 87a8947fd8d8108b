/**
 * `missing: delete`: the keys a snapshot lacks are deleted through the API (DELETE /v1/<entity>/{id}, with the ids the
 * agent learned from bulk results), after the file's rows were sent and only if the brakes let the file through.
 *
 * What survives a crash: a key is forgotten (and counted as deleted) only after the API answered its DELETE, in
 * transactions of up to FORGET_BATCH keys. A crash in between leaves keys that are gone on the platform but still
 * remembered: the next comparison finds them missing again and deletes them again, which DELETE allows (204, or 404
 * for a row already gone: both mean gone).
 *
 * A key without a known id (sent by import mode, or by a platform whose bulk answer carried none) is not deleted: it
 * stays in the missing CSV and counts as not deleted.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { ApiClient } from '../../api/client.ts';
import { ApiError, API_ERROR_CODES } from '../../api/errors.ts';
import type { Entity } from '../../api/schemas/index.ts';
import type { Logger } from '../../log.ts';
import { forgetDeleted } from '../../store/delta-state.ts';
import type { StateDb } from '../../store/state-db.ts';

const FORGET_BATCH = 100;

/** One key to delete, as the comparison spilled it (one JSON object per line). */
export interface Deletion {
  /** The key hash, as decimal text (a signed 64-bit integer). */
  readonly h: string;
  readonly id: string | number | null;
}

function deleteOf(client: ApiClient, entity: Entity): (id: string | number, signal?: AbortSignal) => Promise<void> {
  switch (entity) {
    case 'products':
      return (id, signal) => client.products.delete(String(id), { signal });
    case 'product_store':
      return (id, signal) => client.productStore.delete(String(id), { signal });
    case 'transactions':
      return (id, signal) => client.transactions.delete(String(id), { signal });
    case 'competitor_prices':
      return (id, signal) => client.competitorPrices.delete(Number(id), { signal });
  }
}

export interface DeleteOutcome {
  readonly deleted: number;
  /** Missing keys with no id known: not deleted. */
  readonly withoutId: number;
}

/**
 * Deletes the keys listed in `spill` (written by the comparison). Stops at the first failure other than "already
 * gone" (the API failing after the client's retries, a drain): the keys deleted so far stay forgotten, and the error
 * is rethrown (the file is deferred; its next attempt compares again and deletes the rest).
 */
export async function deleteMissing(
  ctx: { readonly db: StateDb; readonly client: ApiClient; readonly logger: Logger; readonly signal?: AbortSignal | undefined },
  file: { readonly id: number; readonly entity: Entity; readonly original_name: string },
  scopeId: number,
  spill: string,
): Promise<DeleteOutcome> {
  const remove = deleteOf(ctx.client, file.entity);
  let pending: bigint[] = [];
  let deleted = 0;
  let withoutId = 0;
  const commit = async (): Promise<void> => {
    if (pending.length === 0) return;
    const keys = pending;
    pending = [];
    await forgetDeleted(ctx.db, scopeId, file.id, keys);
  };
  const lines = createInterface({ input: createReadStream(spill), crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      if (line === '') continue;
      const d = JSON.parse(line) as Deletion;
      if (d.id === null) {
        withoutId += 1;
        continue;
      }
      if (ctx.signal?.aborted === true) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('push stopped');
      try {
        await remove(d.id);
      } catch (error) {
        if (!(error instanceof ApiError && error.code === API_ERROR_CODES.notFound)) throw error;
      }
      pending.push(BigInt(d.h));
      deleted += 1;
      if (pending.length >= FORGET_BATCH) await commit();
    }
  } finally {
    lines.close();
    await commit();
  }
  ctx.logger.info({ file: file.original_name, entity: file.entity, deleted, without_id: withoutId }, 'missing keys of the snapshot deleted');
  return { deleted, withoutId };
}
