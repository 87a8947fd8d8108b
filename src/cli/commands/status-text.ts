/**
 * `status` for people: a few labelled lines, one aligned table of sources, short local times. Same facts as
 * `--json`, fewer words.
 */
import type { FeedOverview } from '../../feed/consumer-status.ts';
import type { HaOverview } from '../../status/ha-overview.ts';
import type { DaemonCheck } from '../../status/daemon-probe.ts';
import type { KeyCheck, StatusReport } from '../../status/status-report.ts';
import type { PullOverview, OutboxOverview, MirrorOverview } from '../../status/pull-overview.ts';
import { duration, fixesNote, labelled, plural, shortTime, table } from './status-table.ts';

function daemonLine(d: DaemonCheck): string {
  switch (d.state) {
    case 'ready':
      return `ready (${d.url ?? ''})`;
    case 'not_ready':
      return `NOT READY (${d.url ?? ''}, ${d.agent_state ?? 'state unknown'}): ${d.reasons.join('; ') || 'no reason given'}`;
    case 'not_running':
      return `not running (nothing answers on ${d.url ?? 'the configured address'})`;
    case 'disabled':
    case 'unknown':
      return `unknown: ${d.reasons.join('; ')}`;
  }
}

function keyLine(k: KeyCheck): string {
  switch (k.state) {
    case 'ok':
      return `works (${k.base_url}, user ${k.user_id ?? '?'}, key id ${k.api_key_id ?? '?'})`;
    case 'skipped':
      return 'not checked (--offline)';
    case 'waiting':
      return `not checked: ${k.message ?? 'a Retry-After window is open'}`;
    case 'rejected':
      return `REJECTED: ${k.message ?? ''}`;
    case 'unreachable':
    case 'error':
      return `not verified: ${k.message ?? ''}`;
  }
}

function pullLines(p: PullOverview, now: Date): [string, string][] {
  let last: string;
  if (p.last_page === null) last = 'never run';
  else if (p.last_page.status === 'done') last = `last page stored ${shortTime(p.last_page.stored_at, now)} (${plural(p.last_page.rows ?? 0, 'row')})`;
  else if (p.last_page.status === 'pending') last = `a page requested ${shortTime(p.last_page.requested_at, now)} is not stored yet (a pull runs, or the next one replays it)`;
  else last = `last page abandoned ${shortTime(p.last_page.stored_at, now)} (the server refused its replay)`;
  const today = `today ${plural(p.pages_today, 'page')}, ${plural(p.rows_today, 'row')}`;
  const a = p.approvals;
  const waiting = a.ack_pending > 0 ? `, ${a.ack_pending} waiting for acknowledgement since ${shortTime(p.oldest_ack_pending_received_at, now)}` : '';
  return [
    ['Pull', `${last}; ${today}`],
    ['Approvals', `${a.total} stored: ${a.acknowledged} acknowledged, ${plural(a.conflict, 'conflict')}${parkedText(a.parked)}${waiting}`],
  ];
}

/** Parked ids need a person: what happened and the command that sends them again. */
function parkedText(parked: number): string {
  return parked > 0 ? `, ${parked} parked (the platform refused them; see \`outbox stats\`, then \`pull --retry-parked\`)` : '';
}

function outboxLines(o: OutboxOverview, now: Date): [string, string][] {
  const files = o.export_stores > 0 ? `; per-store files up to seq ${o.exported_up_to_seq ?? 0} (${plural(o.export_stores, 'store')})` : '';
  const consumers = o.consumers.length === 0
    ? 'none registered'
    : o.consumers.map((c) => `${c.consumer} lag ${c.lag} (${shortTime(c.updated_at, now)})`).join(', ');
  return [
    ['Outbox', `feed ${plural(o.feed_rows, 'row')} (last seq ${o.max_seq}, ${plural(o.withdrawals, 'withdrawal')})${files}`],
    ['Consumers', consumers],
  ];
}

/** Consumers shown by `status` (the furthest behind first); `pricing-agent outbox consumers` lists them all. */
const FEED_CONSUMERS_SHOWN = 10;
const STORES_SHOWN = 3;

function feedLines(f: FeedOverview, now: Date): [string, string][] {
  if (f.listen === null && f.consumers.length === 0) return [];
  const listening = f.listen === null ? 'off (feed.listen not set)' : `${f.listen} (configured)`;
  const lines: [string, string][] = [['Feed', `${listening}; ${plural(f.consumers.length, 'consumer')}; apply deadline ${f.apply_deadline}`]];
  const behind = (c: FeedOverview['consumers'][number]) => Math.max(0, ...c.stores.map((s) => s.lag_seconds));
  const shown = [...f.consumers].sort((a, b) => behind(b) - behind(a)).slice(0, FEED_CONSUMERS_SHOWN);
  for (const c of shown) {
    const stores = c.stores.slice(0, STORES_SHOWN).map((s) => {
      const applied = s.applied_seq === null ? 'nothing confirmed' : `applied ${s.applied_seq}`;
      const lag = s.lag_rows === 0 ? 'up to date' : `${plural(s.lag_rows, 'row')} not applied, oldest ${duration(s.lag_seconds)}`;
      return `${s.store_id} ${applied} (${lag})`;
    });
    if (c.stores.length > STORES_SHOWN) stores.push(`and ${plural(c.stores.length - STORES_SHOWN, 'more store')}`);
    lines.push(['', `${c.name}: offset ${c.offset ?? '-'}, seen ${shortTime(c.last_seen, now)}; ${stores.join('; ') || 'no store has rows yet'}`]);
  }
  if (f.consumers.length > shown.length) {
    lines.push(['', `and ${plural(f.consumers.length - shown.length, 'more consumer')}: pricing-agent outbox consumers`]);
  }
  for (const o of f.overdue) {
    lines.push(['OVERDUE', `${o.consumer} store ${o.store_id}: ${plural(o.rows, 'due price change')} not applied within ${f.apply_deadline} (oldest stored ${shortTime(o.oldest_recorded_at, now)})`]);
  }
  return lines;
}

function haLines(ha: HaOverview, now: Date): [string, string][] {
  const lease = ha.lease;
  const holder =
    lease === null
      ? 'no node has taken the lease yet'
      : lease.remaining_ms > 0
        ? `active: ${lease.holder} (lease token ${lease.token}, renewed until ${shortTime(lease.expires_at, now)})`
        : `no active node: the lease of ${lease.holder} expired ${shortTime(lease.expires_at, now)}`;
  const lines: [string, string][] = [['HA', `${ha.this_node === null ? '' : `this node ${ha.this_node}; `}${holder}`]];
  for (const n of ha.nodes) lines.push(['', `${n.node}: ${n.role}, last seen ${shortTime(n.seen_at, now)}, version ${n.version}`]);
  return lines;
}

/** Every label block of the output shares this width, so that all values start in one column. */
const LABEL_WIDTH = 'Approvals'.length;

function mirrorLine(mirrors: readonly MirrorOverview[], now: Date): string {
  if (mirrors.length === 0) return 'none yet';
  return mirrors
    .map((m) => {
      const state = m.last_error !== null ? `ERROR ${shortTime(m.last_error_at, now)}: ${m.last_error}` : `last success ${shortTime(m.last_success_at, now)}`;
      const listing = m.listing_in_progress ? `, listing in progress (${m.listing_rows} rows)` : '';
      return `${m.stream}: watermark ${m.watermark ?? '-'}, ${state}${listing}`;
    })
    .join(`\n${' '.repeat(LABEL_WIDTH + 2)}`);
}

function sourceTable(r: StatusReport, now: Date): string[] {
  if (r.sources.length === 0) return labelled([['Sources', 'none configured (sources: in the config)']], LABEL_WIDTH);
  const rows = r.sources.map((s) => [
    s.configured ? s.name : `${s.name} (not configured)`,
    s.waiting === null ? (s.configured ? 'no folder' : '-') : String(s.waiting),
    s.deferred > 0 ? `${s.processing} (${s.deferred} deferred)` : String(s.processing),
    String(s.done_today),
    String(s.failed_today),
    `${s.rows_accepted_today}/${s.rows_rejected_today}${s.rows_merged_today > 0 ? ` (${s.rows_merged_today} merged)` : ''}`,
    s.last_file ? `#${s.last_file.id} ${s.last_file.name}${fixesNote(s.last_file.fixes_file_id)} ${s.last_file.status} ${shortTime(s.last_file.at, now)}` : '-',
  ]);
  return table(['SOURCE', '#WAITING', '#PROCESSING', '#DONE TODAY', '#FAILED TODAY', '#ROWS OK/REJECTED', 'LAST FILE'], rows);
}

export function statusText(r: StatusReport, now: Date): string {
  const db = r.database.state === 'ok' ? r.database.path : `${r.database.path}: ${r.database.message ?? r.database.state}`;
  const head: [string, string][] = [['State', db], ['Daemon', daemonLine(r.daemon)], ['API key', keyLine(r.api_key)]];
  if (r.api_wait) head.push(['API wait', `${r.api_wait.text}; end it early with \`${r.api_wait.clear_command}\``]);
  const lines = [...labelled(head, LABEL_WIDTH), '', ...sourceTable(r, now)];
  if (r.processing_files.length > 0) {
    lines.push('', 'In processing/:');
    for (const f of r.processing_files) {
      const why = f.next_attempt_at !== null ? `deferred (${f.error_code ?? '?'}: ${f.error_message ?? ''}), next try ${shortTime(f.next_attempt_at, now)}` : f.status;
      lines.push(`  #${f.id} ${f.source} ${f.name}: ${why}`);
    }
  }
  if (r.held_files.length > 0) {
    lines.push('', 'Held by the brakes (nothing of them was sent):');
    for (const f of r.held_files) {
      lines.push(`  #${f.id} ${f.source} ${f.name}, held ${shortTime(f.held_at, now)}: ${f.brakes.join('; ')}`);
      lines.push(`    preview: ${f.preview_path}`, `    release: ${f.release_command}`);
    }
  }
  const more: [string, string][] = [];
  if (r.pull) more.push(...pullLines(r.pull, now));
  if (r.outbox) more.push(...outboxLines(r.outbox, now));
  if (r.feed) more.push(...feedLines(r.feed, now));
  if (r.ha) more.push(...haLines(r.ha, now));
  if (r.database.state === 'ok') more.push(['Mirrors', mirrorLine(r.mirrors, now)]);
  if (more.length > 0) lines.push('', ...labelled(more, LABEL_WIDTH));
  if (r.problems.length > 0) lines.push('', ...r.problems.map((p) => `NOT OK: ${p}`));
  return `${lines.join('\n')}\n`;
}
