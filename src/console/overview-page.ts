/**
 * `/`: the agent at a glance, from the same StatusReport as `pricing-agent status --json`: what needs attention
 * first (a rejected key, loudly; the reasons it is not ready), then every source's inbox, the last files, the pull,
 * the outbox and its POS consumers, the mirrors, and the agent itself.
 *
 * The feed's consumers with how far each store has applied its prices, and the stores late past the deadline
 * (issue 14). Files the brakes hold (delta push) are an alert with their release commands and a count per source:
 * nothing of them was sent, and only a person sends them. The HA role (issue 15) is in the header
 * (ConsoleContext.role).
 */
import type { SourceOverview, ProcessingFile } from '../status/inbox-overview.ts';
import type { FeedOverview } from '../feed/consumer-status.ts';
import type { MirrorOverview, OutboxOverview, PullOverview } from '../status/pull-overview.ts';
import type { StatusReport } from '../status/status-report.ts';
import type { ConsoleFile } from './console-data.ts';
import { fileHref, filesTable, fixesLink } from './file-table.ts';
import { count, dateOrTime, localTime, localTimeText, type TimeFormat } from './format.ts';
import { html, type Html } from './html.ts';
import { dataTable, figures, section, statusPill, type Column } from './layout.ts';

/** How many of the newest files the overview lists. */
export const OVERVIEW_FILES = 10;

export function alerts(report: StatusReport): Html {
  const out: Html[] = [];
  if (report.api_key.state === 'rejected') {
    out.push(html`<div class="alert bad" role="alert" id="key-rejected"><strong>The API rejected the key (401): sending and pulling are paused.</strong>
      Nothing is lost: files wait in processing/ and the pull resumes where it stopped. Generate a new key in the web
      application and put it in <code>api.key_file</code> (read again within a minute) or <code>api.key</code> (then
      reload the agent).${report.api_key.message !== undefined && html`<br><span class="muted">${report.api_key.message}</span>`}</div>`);
  }
  if (report.api_key.state === 'unreachable' && report.daemon.state === 'ready') {
    out.push(html`<div class="alert busy" role="status" id="api-unreachable"><strong>The API does not answer: sending and pulling wait for it.</strong>
      Nothing is lost: files wait in processing/ and are sent when it answers, the pull continues where it stopped, and
      the tills keep reading the outbox. <code>pricing-agent check</code> says more.${report.api_key.message !== undefined && html`<br><span class="muted">${report.api_key.message}</span>`}</div>`);
  }
  const reasons = report.daemon.reasons.filter((r) => !/rejected the key/.test(r) || report.api_key.state !== 'rejected');
  if (report.daemon.state === 'not_ready' && reasons.length > 0) {
    out.push(html`<div class="alert busy" role="status" id="not-ready"><strong>Not ready</strong><ul>${reasons.map((r) => html`<li>${r}</li>`)}</ul></div>`);
  }
  if (report.held_files.length > 0) {
    out.push(html`<div class="alert busy" role="status" id="held"><strong>${count(report.held_files.length)} file(s) held by the brakes: nothing of them was sent.</strong>
      Read each one's preview; if its changes are right, send it with its command.<ul>${report.held_files.map(
        (f) => html`<li><a href="${fileHref(f.id)}">${f.name}</a> (${f.source}): ${f.brakes[0] ?? 'held'} <code class="release">${f.release_command}</code></li>`,
      )}</ul></div>`);
  }
  if (report.api_wait) {
    out.push(html`<div class="alert busy" role="status" id="api-wait"><strong>Sending and pulling wait: ${report.api_wait.text}.</strong>
      The API asked for it (Retry-After, bounded by <code>api.max_retry_after</code>); end the wait early with
      <code>${report.api_wait.clear_command}</code>.</div>`);
  }
  if (report.database.state !== 'ok') {
    out.push(html`<div class="alert busy" id="database"><strong>State database: ${report.database.state}</strong>${report.database.message ?? ''}</div>`);
  }
  return html`${out}`;
}

function totals(report: StatusReport): Html {
  const sum = (pick: (s: SourceOverview) => number | null) => report.sources.reduce((n, s) => n + (pick(s) ?? 0), 0);
  const deferred = sum((s) => s.deferred);
  const failed = sum((s) => s.failed_today);
  const pending = report.pull?.approvals.ack_pending ?? 0;
  return figures([
    ['Waiting in inboxes', count(sum((s) => s.waiting))],
    ['Processing', `${count(sum((s) => s.processing))}${deferred > 0 ? ` (${count(deferred)} deferred)` : ''}`, deferred > 0 ? 'busy' : undefined],
    ['Files done today', count(sum((s) => s.done_today))],
    ['Files failed today', count(failed), failed > 0 ? 'bad' : undefined],
    ['Rows accepted today', count(sum((s) => s.rows_accepted_today))],
    ['Rows rejected today', count(sum((s) => s.rows_rejected_today)), sum((s) => s.rows_rejected_today) > 0 ? 'busy' : undefined],
    ['Awaiting ack.', count(pending), pending > 0 ? 'busy' : undefined],
    ['Price feed rows', count(report.outbox?.feed_rows)],
  ]);
}

function inboxes(sources: readonly SourceOverview[], held: StatusReport['held_files'], time: TimeFormat): Html {
  const heldOf = (source: SourceOverview) => held.filter((f) => f.source === source.name).length;
  const withHeld = held.length > 0;
  const columns: Column[] = [
    { label: 'Source', head: true },
    { label: 'Waiting', num: true },
    { label: 'Processing', num: true },
    ...(withHeld ? [{ label: 'Held', num: true }] : []),
    { label: 'Done today', num: true },
    { label: 'Failed today', num: true },
    { label: 'Duplicates today', num: true, wide: true },
    { label: 'Rows accepted', num: true },
    { label: 'Rows rejected', num: true },
    { label: 'Last file', wrap: true },
  ];
  const rows = sources.map((s) => ({
    attrs: html` data-source="${s.name}"`,
    cells: [
      html`<a href="/files?source=${encodeURIComponent(s.name)}">${s.name}</a><span class="entity">${s.entity}${!s.configured && ', not configured'}</span>`,
      s.waiting === null ? html`<span title="the inbox folder cannot be read">–</span>` : count(s.waiting),
      html`${count(s.processing)}${s.deferred > 0 && html` <span class="busy" title="${s.next_retry_at === null ? '' : `next try ${localTimeText(s.next_retry_at, time)}`}">(${count(s.deferred)} deferred)</span>`}`,
      ...(withHeld ? [heldOf(s) > 0 ? html`<span class="busy">${count(heldOf(s))}</span>` : count(0)] : []),
      count(s.done_today),
      s.failed_today > 0 ? html`<span class="bad">${count(s.failed_today)}</span>` : count(s.failed_today),
      count(s.duplicate_today),
      count(s.rows_accepted_today),
      s.rows_rejected_today > 0 ? html`<span class="busy">${count(s.rows_rejected_today)}</span>` : count(s.rows_rejected_today),
      s.last_file === null
        ? html`<span class="muted">none yet</span>`
        : html`<a href="${fileHref(s.last_file.id)}">${s.last_file.name}</a>${fixesLink(s.last_file.fixes_file_id)} ${statusPill(s.last_file.status)} <span class="muted">${localTime(s.last_file.at, time)}</span>`,
    ],
  }));
  return dataTable(columns, rows, 'No source is configured: add one under sources: in the config (README, "Push").');
}

function processing(files: readonly ProcessingFile[], time: TimeFormat): Html {
  const columns: Column[] = [
    { label: '#', num: true },
    { label: 'Source' },
    { label: 'File', head: true },
    { label: 'Status' },
    { label: 'Attempts', num: true },
    { label: 'Last error', text: true },
    { label: 'Next try' },
  ];
  const rows = files.map((f) => ({
    cells: [
      html`<a href="${fileHref(f.id)}">${f.id}</a>`,
      f.source,
      f.name,
      statusPill(f.status),
      count(f.attempts),
      f.error_code === null ? '–' : html`<code>${f.error_code}</code> ${f.error_message ?? ''}`,
      localTime(f.next_attempt_at, time),
    ],
  }));
  return dataTable(columns, rows, 'Nothing in processing/.');
}

function pull(p: PullOverview | null, outbox: OutboxOverview | null, time: TimeFormat): Html {
  if (p === null || outbox === null) return html`<p class="empty">No state database yet: the agent has not pulled.</p>`;
  const a = p.approvals;
  const last = p.last_page;
  return html`${figures([
    ['Last page', last === null ? 'never' : html`${localTime(last.stored_at ?? last.requested_at, time)} ${last.status !== 'done' && statusPill(last.status)}`],
    ['Pages today', count(p.pages_today)],
    ['Rows today', count(p.rows_today)],
    ['Versions stored', count(a.total)],
    ['Acknowledged', count(a.acknowledged), 'ok'],
    ['Awaiting ack.', count(a.ack_pending), a.ack_pending > 0 ? 'busy' : undefined],
    ['Conflicts', count(a.conflict), a.conflict > 0 ? 'bad' : undefined],
  ])}
  ${p.oldest_ack_pending_received_at !== null && html`<p class="muted">Oldest version waiting for its acknowledgement: received ${localTime(p.oldest_ack_pending_received_at, time)}.</p>`}`;
}

function withdrawals(outbox: OutboxOverview | null, time: TimeFormat): Html {
  return dataTable(
    [{ label: 'Seq', num: true }, { label: 'Item', head: true }, { label: 'Store' }, { label: 'Price', num: true }, { label: 'Recorded' }],
    (outbox?.last_withdrawals ?? []).map((w) => ({
      cells: [
        count(w.seq),
        w.item_id ?? w.sku ?? '–',
        w.store_id === null ? html`<span class="muted">all stores</span>` : html`<span class="id" title="${w.store_id}">${w.store_id}</span>`,
        `${w.approved_price} ${w.currency_code}`,
        localTime(w.recorded_at, time),
      ],
    })),
    'No price was withdrawn.',
  );
}

const CONSUMER_LABELS: Record<string, string> = { consumer: 'Consumer', last_seq: 'Offset', lag: 'Lag', updated_at: 'Updated' };

/** A consumer's value: the columns known today, then whatever the feed adds (last seen, applied: issue 14). */
function consumerValue(value: unknown, time: TimeFormat): Html | string {
  if (typeof value === 'number') return count(value);
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value)) return localTime(value, time);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (value === null || value === undefined) return '–';
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

function outboxSection(outbox: OutboxOverview | null, time: TimeFormat): Html {
  if (outbox === null) return html`<p class="empty">No state database yet.</p>`;
  const consumers = outbox.consumers.map((c) => c as unknown as Record<string, unknown>);
  const keys = [...new Set(consumers.flatMap((c) => Object.keys(c)))];
  const columns = keys.map((k) => ({
    label: CONSUMER_LABELS[k] ?? k.replaceAll('_', ' ').replace(/^./, (c) => c.toUpperCase()),
    num: consumers.some((c) => typeof c[k] === 'number'),
    head: k === 'consumer',
  }));
  const table = dataTable(
    columns,
    consumers.map((c) => ({ cells: keys.map((k) => consumerValue(c[k], time)) })),
    'No POS consumer has recorded an offset yet (docs/outbox.md: how a POS reads and records how far it read).',
  );
  return html`${figures([
    ['Feed rows', count(outbox.feed_rows)],
    ['Last seq', count(outbox.max_seq)],
    ['Withdrawals', count(outbox.withdrawals)],
    ['Store files', outbox.exported_up_to_seq === null ? 'off' : html`${count(outbox.export_stores)} stores<span class="unit">to seq ${count(outbox.exported_up_to_seq)}</span>`],
  ])}<h3>POS consumers</h3>${table}`;
}

/** Seconds as "2 h 5 min", "40 s". */
function age(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h ${minutes % 60} min` : `${Math.floor(hours / 24)} days`;
}

/**
 * The feed for POS systems on the network (issue 14), from status --json's `feed`: each consumer's offset and when
 * it was last seen, and per store how far it has applied the prices; stores late past `feed.apply_deadline` first.
 */
function feedSection(feed: FeedOverview | null, time: TimeFormat): Html {
  if (feed === null || feed.listen === null) {
    return html`<p class="empty">The feed is off: POS systems read the outbox on this host (feed.listen in the config serves it to the network; docs/feed.md).</p>`;
  }
  const overdue = feed.overdue.length === 0
    ? ''
    : html`<div class="alert busy" id="feed-overdue"><strong>${count(feed.overdue.length)} ${feed.overdue.length === 1 ? 'store has' : 'stores have'} not applied prices due for longer than ${feed.apply_deadline}</strong><ul>${feed.overdue.map(
        (o) => html`<li>${o.consumer}, store ${o.store_id}: ${count(o.rows)} rows, the oldest stored ${localTime(o.oldest_recorded_at, time)}</li>`,
      )}</ul></div>`;
  const consumers = dataTable(
    [{ label: 'Consumer', head: true }, { label: 'Offset', num: true }, { label: 'Last seen' }, { label: 'Stores', num: true }, { label: 'Rows not applied', num: true }, { label: 'Oldest not applied' }],
    feed.consumers.map((c) => ({
      attrs: html` data-consumer="${c.name}"`,
      cells: [
        c.name,
        count(c.offset),
        c.last_seen === null ? html`<span class="muted">never</span>` : localTime(c.last_seen, time),
        count(c.stores.length),
        count(c.stores.reduce((n, st) => n + st.lag_rows, 0)),
        c.stores.some((st) => st.lag_rows > 0) ? age(Math.max(...c.stores.map((st) => st.lag_seconds))) : '–',
      ],
    })),
    'No consumer is configured (feed.consumers).',
  );
  const lagging = feed.consumers.flatMap((c) => c.stores.filter((st) => st.lag_rows > 0).map((st) => ({ consumer: c.name, ...st })));
  const stores = dataTable(
    [{ label: 'Store', head: true }, { label: 'Consumer' }, { label: 'Applied seq', num: true }, { label: 'Rows not applied', num: true }, { label: 'Waiting for' }],
    lagging.map((st) => ({ cells: [html`<span class="id" title="${st.store_id}">${st.store_id}</span>`, st.consumer, count(st.applied_seq), count(st.lag_rows), age(st.lag_seconds)] })),
    'Every store has applied every price it was sent.',
  );
  return html`${overdue}${figures([
    ['Listening on', feed.listen, 'address'],
    ['Apply deadline', feed.apply_deadline],
  ])}${consumers}<h3>Stores with prices not applied yet</h3>${stores}`;
}

function mirrors(list: readonly MirrorOverview[], time: TimeFormat): Html {
  const columns: Column[] = [{ label: 'Stream', head: true }, { label: 'Watermark' }, { label: 'Last success' }, { label: 'Listing' }, { label: 'Last error', text: true }];
  const rows = list.map((m) => ({
    cells: [
      m.stream,
      dateOrTime(m.watermark, time),
      localTime(m.last_success_at, time),
      m.listing_in_progress ? html`<span class="pill busy">in progress</span> ${count(m.listing_rows)} rows` : '–',
      m.last_error === null ? '–' : html`<span class="bad">${m.last_error}</span> ${localTime(m.last_error_at, time)}`,
    ],
  }));
  return dataTable(columns, rows, 'No mirror has run (pull.mirrors in the config).');
}

function agentSection(report: StatusReport, time: TimeFormat): Html {
  const key = report.api_key;
  const keyText =
    key.state === 'ok'
      ? html`<span class="pill ok">works</span> ${key.base_url}`
      : html`<span class="pill ${key.state === 'rejected' ? 'bad' : 'busy'}">${key.state}</span> ${key.base_url}${key.message !== undefined && html` — ${key.message}`}`;
  const d = report.daemon;
  return html`<dl class="facts">
    <dt>State</dt><dd>${d.agent_state ?? '–'}</dd>
    <dt>Ready</dt><dd id="readiness">${d.state === 'ready' ? html`<span class="pill ok">ready</span>` : html`<span class="pill bad">not ready</span><ul>${d.reasons.map((r) => html`<li>${r}</li>`)}</ul>`}</dd>
    <dt>API key</dt><dd>${keyText}</dd>
    <dt>State database</dt><dd>${report.database.path} <span class="muted">(${report.database.state})</span></dd>
    <dt>Generated</dt><dd>${localTime(report.generated_at, time)}</dd>
  </dl>`;
}

export function overviewBody(report: StatusReport, lastFiles: readonly ConsoleFile[], time: TimeFormat): Html {
  return html`${alerts(report)}
${totals(report)}
${section('inboxes', 'Inboxes', inboxes(report.sources, report.held_files, time), html`today, by source`)}
${report.processing_files.length > 0 && section('processing', 'In processing', processing(report.processing_files, time))}
${section('files', 'Last files', filesTable(lastFiles, time, 'No file has been claimed yet: drop a CSV file into a source\'s inbox.'), html`<a href="/files">all files</a>`)}
<div class="columns">
${section('pull', 'Pull of approved prices', pull(report.pull, report.outbox, time))}
${section('outbox', 'Outbox', outboxSection(report.outbox, time))}
</div>
${section('feed', 'Feed to POS systems', feedSection(report.feed, time))}
${section('withdrawals', 'Last withdrawals', withdrawals(report.outbox, time), html`prices cancelled on the platform; ${count(report.outbox?.withdrawals)} in all`)}
${section('mirrors', 'Mirrors', mirrors(report.mirrors, time))}
${section('agent', 'Agent', agentSection(report, time))}`;
}
