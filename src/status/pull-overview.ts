/**
 * The pull side at a glance, from what the pull stores: the last delivery page (delivery_intents), the checkpointed
 * cursor (pull_state), the acknowledgement state of stored versions, the outbox (feed, consumers, per-store files)
 * and the mirrors' watermarks (stream_state). Reads only.
 *
 * There is no "pull run" row: a run is a sequence of pages, each committed with its intent. The last intent says how
 * the last run ended: done (its page stored), pending (a page handed out but not stored yet: the next run replays it
 * first; normal while a pull runs) or abandoned (the server refused the replay).
 */
import { DEFAULT_PULL_JOB, lastDeliveryIntent, storedPagesSummary } from '../store/delivery-intents.ts';
import { listStreamStates } from '../store/mirrors.ts';
import { outboxStats, type OutboxStats } from '../store/outbox-stats.ts';
import { lastWithdrawals, listConsumers, type ConsumerOffset, type FeedRow } from '../store/price-feed.ts';
import type { StateDb } from '../store/state-db.ts';
import { localDayBounds } from './inbox-overview.ts';

export interface PullOverview {
  job: string;
  /** No delivery page was ever requested. */
  never_run: boolean;
  last_page: {
    request_id: string;
    status: 'pending' | 'done' | 'abandoned';
    requested_at: string;
    stored_at: string | null;
    rows: number | null;
  } | null;
  /** The newest page that was stored. */
  last_stored_at: string | null;
  pages_today: number;
  rows_today: number;
  cursor_updated_at: string | null;
  approvals: OutboxStats['approvals'];
  oldest_ack_pending_received_at: string | null;
}

export interface OutboxOverview {
  database_id: string | null;
  max_seq: number;
  feed_rows: number;
  withdrawals: number;
  /** The newest withdrawals (prices cancelled on the platform), newest first. */
  last_withdrawals: FeedRow[];
  consumers: ConsumerOffset[];
  export_stores: number;
  exported_up_to_seq: number | null;
}

export interface MirrorOverview {
  stream: string;
  watermark: string | null;
  last_success_at: string | null;
  /** A listing was started and not completed (it resumes from its cursor). */
  listing_in_progress: boolean;
  listing_rows: number;
  last_error: string | null;
  last_error_at: string | null;
}

/** How many of the newest withdrawals the overview lists. */
export const LAST_WITHDRAWALS = 10;

export async function pullOverview(db: StateDb, now: Date, job: string = DEFAULT_PULL_JOB): Promise<{ pull: PullOverview; outbox: OutboxOverview }> {
  const last = await lastDeliveryIntent(db, job);
  const { start, end } = localDayBounds(now);
  const today = await storedPagesSummary(db, start, end, job);
  const stats = await outboxStats(db);
  const pull: PullOverview = {
    job,
    never_run: last === undefined,
    last_page: last
      ? { request_id: last.request_id, status: last.status, requested_at: last.created_at, stored_at: last.done_at, rows: last.row_count }
      : null,
    last_stored_at: today.lastStoredAt,
    pages_today: today.pages,
    rows_today: today.rows,
    cursor_updated_at: today.cursorUpdatedAt,
    approvals: stats.approvals,
    oldest_ack_pending_received_at: stats.oldest_ack_pending_received_at,
  };
  const outbox: OutboxOverview = {
    database_id: stats.database_id,
    max_seq: stats.max_seq,
    feed_rows: stats.feed_rows,
    withdrawals: stats.withdrawals,
    last_withdrawals: await lastWithdrawals(db, LAST_WITHDRAWALS),
    consumers: await listConsumers(db),
    export_stores: stats.export_stores,
    exported_up_to_seq: stats.exported_up_to_seq,
  };
  return { pull, outbox };
}

export async function mirrorOverview(db: StateDb): Promise<MirrorOverview[]> {
  return (await listStreamStates(db)).map((s) => ({
    stream: s.stream,
    watermark: s.watermark,
    last_success_at: s.last_success_at,
    listing_in_progress: s.listing_started_at !== null,
    listing_rows: s.listing_rows,
    last_error: s.last_error,
    last_error_at: s.last_error_at,
  }));
}
