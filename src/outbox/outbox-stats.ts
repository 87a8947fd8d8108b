/**
 * One snapshot of the outbox for `pricing-agent status`/`outbox` and the metrics endpoint. Snake_case keys: the
 * same names appear in `--json` output and as metric labels. A read, through Kysely; no table is written.
 */
import { sql } from 'kysely';
import type { StateDb } from '../store/state-db.ts';

export interface OutboxStats {
  /** Changes when the database is recreated: a POS keeping its offset elsewhere must start over. */
  database_id: string | null;
  max_seq: number;
  feed_rows: number;
  withdrawals: number;
  approvals: {
    total: number;
    ack_pending: number;
    acknowledged: number;
    conflict: number;
    /** Refused by the platform with a 4xx other than 409/429; set aside until `pull --retry-parked`. */
    parked: number;
    /** Learned from history reads; nothing to acknowledge. */
    not_delivered: number;
  };
  /** Received the longest ago among the versions still waiting for acknowledgement. */
  oldest_ack_pending_received_at: string | null;
  pending_delivery_intents: number;
  consumers: number;
  /** The lag of the consumer furthest behind, null without consumers. */
  max_consumer_lag: number | null;
  /** Stores (folders) with per-store export files; every store's rows up to this seq are in files. */
  export_stores: number;
  exported_up_to_seq: number | null;
}

export async function outboxStats(db: StateDb): Promise<OutboxStats> {
  const k = db.kysely;
  const [meta, feed, approvals, oldest, intents, consumers, exports] = await Promise.all([
    k.selectFrom('agent_meta').select('value').where('key', '=', 'database_id').executeTakeFirst(),
    k
      .selectFrom('price_feed')
      .select((eb) => [
        eb.fn.coalesce(eb.fn.max('seq'), sql<number>`0`).as('max_seq'),
        eb.fn.countAll<number>().as('rows'),
        eb.fn.count<number>('seq').filterWhere('kind', '=', 'withdrawal').as('withdrawals'),
      ])
      .executeTakeFirstOrThrow(),
    // No approval_acks row (status null): learned from a history read, not delivered.
    k
      .selectFrom('approved_prices as a')
      .leftJoin('approval_acks as ack', 'ack.approval_id', 'a.id')
      .select(['ack.status', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('ack.status')
      .execute(),
    k
      .selectFrom('approval_acks as ack')
      .innerJoin('approved_prices as a', 'a.id', 'ack.approval_id')
      .select((eb) => eb.fn.min('a.received_at').as('received_at'))
      .where('ack.status', '=', 'pending')
      .executeTakeFirst(),
    k
      .selectFrom('delivery_intents')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow(),
    k
      .selectFrom('consumer_offsets')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('last_seq').as('min_seq')])
      .executeTakeFirstOrThrow(),
    k
      .selectFrom('outbox_exports')
      .select((eb) => [
        eb.fn.countAll<number>().as('n'),
        eb.selectFrom('outbox_export_scan').select('scanned_seq').where('id', '=', 1).as('scanned_seq'),
      ])
      .executeTakeFirstOrThrow(),
  ]);
  const byStatus = (status: string | null) => approvals.find((r) => r.status === status)?.n ?? 0;
  return {
    database_id: meta?.value ?? null,
    max_seq: feed.max_seq,
    feed_rows: feed.rows,
    withdrawals: feed.withdrawals,
    approvals: {
      total: approvals.reduce((sum, r) => sum + r.n, 0),
      ack_pending: byStatus('pending'),
      acknowledged: byStatus('acknowledged'),
      conflict: byStatus('conflict'),
      parked: byStatus('parked'),
      not_delivered: byStatus(null),
    },
    oldest_ack_pending_received_at: oldest?.received_at ?? null,
    pending_delivery_intents: intents.n,
    consumers: consumers.n,
    max_consumer_lag: consumers.min_seq === null ? null : feed.max_seq - consumers.min_seq,
    export_stores: exports.n,
    exported_up_to_seq: exports.scanned_seq,
  };
}
