/**
 * One snapshot of the outbox for `pricing-agent status`/`outbox` and the metrics endpoint. Snake_case keys: the
 * same names appear in `--json` output and as metric labels. Reads only.
 */
import { databaseId } from './meta.ts';
import { sqlOf } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

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
  const sql = sqlOf(db);
  const meta = await databaseId(db);
  const feed = await sql.get<{ max_seq: number; rows: number; withdrawals: number }>(
    `SELECT coalesce(max(seq), 0) AS max_seq, count(*) AS rows, count(*) FILTER (WHERE kind = 'withdrawal') AS withdrawals
     FROM price_feed`,
  );
  // No approval_acks row (status null): learned from a history read, not delivered.
  const approvals = await sql.all<{ status: string | null; n: number }>(
    `SELECT ack.status AS status, count(*) AS n FROM approved_prices a
     LEFT JOIN approval_acks ack ON ack.approval_id = a.id GROUP BY ack.status`,
  );
  const oldest = await sql.value<string | null>(
    `SELECT min(a.received_at) FROM approval_acks ack JOIN approved_prices a ON a.id = ack.approval_id
     WHERE ack.status = 'pending'`,
  );
  const intents = await sql.value<number>(`SELECT count(*) FROM delivery_intents WHERE status = 'pending'`);
  const consumers = await sql.get<{ n: number; min_seq: number | null }>(
    `SELECT count(*) AS n, min(last_seq) AS min_seq FROM consumer_offsets`,
  );
  const exports = await sql.get<{ n: number; scanned_seq: number | null }>(
    `SELECT count(*) AS n, (SELECT scanned_seq FROM outbox_export_scan WHERE id = 1) AS scanned_seq FROM outbox_exports`,
  );
  const maxSeq = feed?.max_seq ?? 0;
  const byStatus = (status: string | null) => approvals.find((r) => r.status === status)?.n ?? 0;
  return {
    database_id: meta ?? null,
    max_seq: maxSeq,
    feed_rows: feed?.rows ?? 0,
    withdrawals: feed?.withdrawals ?? 0,
    approvals: {
      total: approvals.reduce((sum, r) => sum + r.n, 0),
      ack_pending: byStatus('pending'),
      acknowledged: byStatus('acknowledged'),
      conflict: byStatus('conflict'),
      parked: byStatus('parked'),
      not_delivered: byStatus(null),
    },
    oldest_ack_pending_received_at: oldest ?? null,
    pending_delivery_intents: intents ?? 0,
    consumers: consumers?.n ?? 0,
    max_consumer_lag: consumers?.min_seq == null ? null : maxSeq - consumers.min_seq,
    export_stores: exports?.n ?? 0,
    exported_up_to_seq: exports?.scanned_seq ?? null,
  };
}
