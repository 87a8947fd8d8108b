/**
 * The chaos run's verdict: one row per promise of the agent, each PASS or FAIL with the numbers behind it (INFO
 * rows only describe the run). Definitions:
 *
 * - delivered versions: approvals whose export_status on the platform left `pending` (exported_api or
 *   acknowledged). The agent reads only through deliveries (a page lost to a dropped connection is replayed by its
 *   request_id), so these are exactly the versions it received.
 * - outbox feed: one `price` row per delivered version, none for any other id; one `withdrawal` row per delivered
 *   version that is cancelled on the platform, none for any other.
 * - acknowledged exactly once: every delivered version still current (not cancelled, not superseded) has
 *   ack_count 1 on the platform and `acknowledged` locally; no id has ack_count above 1 or was acknowledged without
 *   being delivered; every local status agrees with the platform. A re-sent batch refused as already_acknowledged
 *   (its earlier response was lost to a dropped connection or a kill) is not a second acknowledgement: counted as
 *   "refused re-sends"; against a dialect that accepts an id again without effect (strict, lenient) such a batch is
 *   counted as "re-sends accepted again".
 */
import type { SandboxHandle } from '../../src/sandbox/index.ts';
import type { DaemonProcess } from '../support/daemon-harness.ts';
import type { PushReportRows } from '../../src/ingest/file/report.ts';
import { filesContaining, readOutbox, rejectRecords, reportsIn, type FoundReport, type OutboxView } from './evidence.ts';
import { CHAOS_ENTITIES, competitorKey, productStoreKey, SOURCE_OF, type ChaosEntity, type ChaosFile } from './files.ts';
import { metricLabelProblems } from './metrics-labels.ts';
import type { ChaosOptions } from './runner.ts';

export interface RunRecord {
  readonly options: ChaosOptions;
  readonly dir: string;
  readonly keyFile: string;
  /** Every API key of the run (the first and the rotated one). */
  readonly keys: string[];
  readonly drops: { file: ChaosFile; redrop: boolean }[];
  redropsSkipped: number;
  kills: number;
  readonly daemons: DaemonProcess[];
  approvalsInjected: number;
  amended: number;
  cancelled: number;
  finalStopCode: number | null;
  readonly captures: Record<string, string>;
  readonly startedAt: number;
  settledMs: number;
  /** Why the final daemon did not settle (null: it did). */
  settleError: string | null;
  /**
   * Ledger ids of files the agent set aside as CRASHED_AGENT (two kills in a row while they were in progress) and the
   * run then retried with `files retry`, as the file's report tells an operator to. Their rows must all arrive.
   */
  readonly setAside: Map<number, string>;
  /** Sandbox clock (epoch ms) of every 429 that closed a rate-limit window. */
  readonly trips: number[];
  /** The outbox as a POS reads it; default: the SQLite file of the run's single agent. */
  readonly outbox?: () => Promise<OutboxView | null>;
}

/** The run's outbox (record.outbox, else the SQLite file in the run's state folder). */
export async function outboxOf(record: RunRecord): Promise<OutboxView | null> {
  return record.outbox ? record.outbox() : readOutbox(`${record.dir}/state/pricing-agent.db`);
}

/**
 * The sandbox records every request it handles while a window is closed, including those the agent had already
 * dispatched (on another of its api.max_connections connections, 3 in this scenario) before the 429 reached it. Such a request
 * is handled within moments of the 429, at most 3 of them per 429; "moments" is generous because the agent and
 * the sandbox share two loaded cores, and a request written before the 429 arrived can wait in a stalled event
 * loop on either side for a few hundred ms. An agent ignoring Retry-After shows as a fourth request, or one later
 * in the window (a restart that forgot the window showed up at +919 ms before rate-limit-until existed).
 */
const IN_FLIGHT_MS = 500;
const IN_FLIGHT_PER_429 = 3;

export interface CheckRow {
  readonly check: string;
  /** true PASS, false FAIL, null INFO. */
  readonly ok: boolean | null;
  readonly detail: string;
}

function sandboxKeys(sandbox: SandboxHandle, entity: ChaosEntity): string[] {
  const state = sandbox.control.state({ keys: true });
  switch (entity) {
    case 'products':
      return state.products.keys ?? [];
    case 'product_store':
      // Not the sandbox's seeded records (one per store, item ids of its grid catalog, ITM-...).
      return (state.product_store.keys ?? []).filter((k) => !k.item_id.startsWith('ITM-')).map(productStoreKey);
    case 'transactions':
      return state.transactions.keys ?? [];
    case 'competitor_prices':
      return (state.competitor_prices.keys ?? []).map(competitorKey);
  }
}

/** The entity of the chaos run's delta source: its files are nightly exports of one assortment (files.ts). */
const DELTA_ENTITY: ChaosEntity = 'product_store';

/**
 * Delta push of the stores source, file by file, against what it must have decided. The files of a source are pushed
 * one after another in the order they were claimed; before each, the agent holds the last accepted version of every
 * key of the earlier files (the platform holds the same). A valid row is unchanged exactly when that version is the
 * row itself; every other row is sent (the source's first file wholly: nothing is known yet). Exact per file: a row
 * the platform already held was never sent, and a row it did not hold was never skipped.
 */
/**
 * `retried`: files set aside as CRASHED_AGENT and retried. An earlier attempt of such a file may have committed
 * batches before the kills, so at its retry those rows are already the state's: its unchanged count lies between the
 * model's figure and that plus its rows, not at the model's figure exactly.
 */
function deltaVerdict(done: readonly { file: ChaosFile; report: FoundReport & { rows: PushReportRows } }[], retried: ReadonlySet<string>): { ok: boolean; detail: string } {
  const held = new Map<string, string>();
  const wrong: string[] = [];
  let sent = 0;
  let unchanged = 0;
  let expectedTotal = 0;
  // A file set aside as CRASHED_AGENT had rows accepted by its crashed attempts, long before its retry is claimed:
  // a file claimed in between may find those rows unchanged, though in claim order (its retry's) they come later.
  const setAside = new Map<string, Set<string>>();
  for (const { file } of done) {
    if (!retried.has(`${file.source}/${file.name}`)) continue;
    file.validKeys.forEach((key, i) => setAside.set(key, (setAside.get(key) ?? new Set()).add(file.validRows[i] ?? '')));
  }
  for (const { file, report } of [...done].sort((a, b) => a.report.claimedAt.localeCompare(b.report.claimedAt))) {
    let expected = 0;
    let early = 0;
    file.validKeys.forEach((key, i) => {
      if (held.get(key) === file.validRows[i]) expected += 1;
      else if (setAside.get(key)?.has(file.validRows[i] ?? '') === true) early += 1;
    });
    file.validKeys.forEach((key, i) => held.set(key, file.validRows[i] ?? ''));
    const got = report.rows.unchanged;
    const exact = !retried.has(`${file.source}/${file.name}`) && early === 0;
    const most = retried.has(`${file.source}/${file.name}`) ? expected + file.validKeys.length : expected + early;
    if (exact ? got !== expected : got < expected || got > most) {
      const why = early > 0 ? `${early} rows as a set-aside file's crashed attempt may have sent them first` : 'retried after CRASHED_AGENT';
      wrong.push(`${file.name}: unchanged ${got}, expected ${exact ? expected : `${expected} to ${most} (${why})`}`);
    }
    sent += report.rows.sent;
    unchanged += report.rows.unchanged;
    expectedTotal += expected;
  }
  // With one file (or none) the source never had anything to compare with: say so rather than look like delta at work.
  const alone = done.length < 2 ? `; only ${done.length} file(s) of the source were pushed, so no row could be unchanged (a run needs --files 6 or more for two)` : '';
  return {
    ok: wrong.length === 0,
    detail: `${done.length} files in claim order: rows sent ${sent}, unchanged ${unchanged} (expected ${expectedTotal})${wrong.length > 0 ? `; ${wrong.slice(0, 3).join('; ')}` : ''}${alone}`,
  };
}

export async function runChecks(record: RunRecord, sandbox: SandboxHandle): Promise<CheckRow[]> {
  const rows: CheckRow[] = [];
  const add = (check: string, ok: boolean | null, detail: string) => rows.push({ check, ok, detail });
  const state = sandbox.control.state({ keys: false });
  const originals = record.drops.filter((d) => !d.redrop).map((d) => d.file);
  const reports = new Map<string, FoundReport[]>();
  for (const entity of CHAOS_ENTITIES) reports.set(SOURCE_OF[entity], await reportsIn(`${record.dir}/inbox/${SOURCE_OF[entity]}`));
  // A set-aside file's CRASHED_AGENT report stays in failed/; the report of its retry is the one that counts.
  const retried = new Set(record.setAside.values());
  const reportsOf = (f: ChaosFile) =>
    (reports.get(f.source) ?? []).filter((r) => r.file === f.name && !(r.error?.code === 'CRASHED_AGENT' && retried.has(`${f.source}/${f.name}`)));

  add('the agent settled after faults off and a clean restart', record.settleError === null, record.settleError ?? `in ${Math.round(record.settledMs / 1000)} s: every file reported, nothing deliverable or pending`);

  // 1. Every valid row exactly once, by business key.
  const perEntity: string[] = [];
  let validOk = true;
  let invalidInSandbox = 0;
  const allKeys = new Map<ChaosEntity, string[]>();
  for (const entity of CHAOS_ENTITIES) {
    const expected = new Set(originals.filter((f) => f.entity === entity).flatMap((f) => f.validKeys));
    const actual = sandboxKeys(sandbox, entity);
    allKeys.set(entity, actual);
    const actualSet = new Set(actual);
    const missing = [...expected].filter((k) => !actualSet.has(k)).length;
    const duplicates = actual.length - actualSet.size;
    const unexpected = [...actualSet].filter((k) => !expected.has(k)).length;
    if (missing + duplicates + unexpected > 0) validOk = false;
    perEntity.push(`${entity} ${actual.length}/${expected.size}${missing + duplicates + unexpected > 0 ? ` (missing ${missing}, twice ${duplicates}, unexpected ${unexpected})` : ''}`);
  }
  add('every valid row in the sandbox exactly once (by business key)', validOk, perEntity.join('; '));

  // 2. No competitor price created twice.
  const competitors = allKeys.get('competitor_prices') ?? [];
  const cpDuplicates = competitors.length - new Set(competitors).size;
  add('no competitor price created twice', state.competitor_prices.single_creates === 0 && cpDuplicates === 0, `single creates ${state.competitor_prices.single_creates}, duplicate keys ${cpDuplicates}`);

  // 3. Every invalid row in its file's rejects and nowhere else.
  let invalidTotal = 0;
  let inRejects = 0;
  for (const file of originals) {
    if (file.invalid.length === 0) continue;
    invalidTotal += file.invalid.length;
    const first = reportsOf(file).find((r) => r.status === 'done' && r.rejectsFile !== null);
    const records = first?.rejectsFile ? await rejectRecords(first.rejectsFile, file.entity === 'products' ? ';' : ',') : [];
    for (const bad of file.invalid) {
      const hit = records.find((r) => r[0] === String(bad.line));
      const fields = hit?.slice(1, -3) ?? [];
      if (hit && (fields.length === 0 || fields.includes(bad.marker))) inRejects += 1;
      if ((allKeys.get(file.entity) ?? []).some((k) => k.includes(bad.marker))) invalidInSandbox += 1;
    }
  }
  add('every invalid row in a rejects file and not in the sandbox', inRejects === invalidTotal && invalidInSandbox === 0, `invalid rows ${invalidTotal}, in rejects ${inRejects}, in the sandbox ${invalidInSandbox}`);

  // 4. Every file in archive/ or failed/ with a report whose counts reconcile.
  let dropCount = 0;
  let reportCount = 0;
  const problems: string[] = [];
  const statuses = new Map<string, number>();
  const deltaReports: { file: ChaosFile; report: FoundReport & { rows: PushReportRows } }[] = [];
  for (const file of new Map(record.drops.map((d) => [`${d.file.source}/${d.file.name}`, d.file])).values()) {
    const drops = record.drops.filter((d) => d.file === file).length;
    const found = reportsOf(file);
    dropCount += drops;
    reportCount += found.length;
    if (found.length !== drops) problems.push(`${file.name}: ${drops} drops, ${found.length} reports`);
    for (const r of found) {
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status === 'duplicate') continue;
      const c = r.rows;
      if (r.status !== 'done' || c === null) {
        problems.push(`${file.name}: ${r.status} ${r.error?.code ?? ''}`);
        continue;
      }
      // Delta sources (products, stores): a row the platform already holds is unchanged, not sent.
      const reconciles = c.accepted + c.rejected + c.superseded + c.merged + c.unchanged === c.read && c.rejected_locally + c.rejected_by_api === c.rejected && c.accepted + c.rejected_by_api === c.sent;
      const expected = c.read === file.rows && c.rejected === file.invalid.length && c.accepted + c.superseded + c.merged + c.unchanged === file.validKeys.length;
      if (!reconciles || !expected) problems.push(`${file.name}: ${JSON.stringify(c)}`);
      if (file.entity === DELTA_ENTITY) deltaReports.push({ file, report: { ...r, rows: c } });
    }
  }
  const byStatus = [...statuses].map(([s, n]) => `${s} ${n}`).join(', ');
  const delta = deltaVerdict(deltaReports, retried);
  add('the delta source (stores) sent what changed, not what the platform holds', delta.ok, delta.detail);
  add('every file archived or failed with a report; counts reconcile', problems.length === 0, `drops ${dropCount}, reports ${reportCount} (${byStatus}; set aside as CRASHED_AGENT and retried ${record.setAside.size})${problems.length > 0 ? `; ${problems.slice(0, 3).join('; ')}` : ''}`);

  // 5-7. The outbox against the platform.
  const outbox = await outboxOf(record);
  const approvals = sandbox.control.world.approvals.all();
  const delivered = approvals.filter((a) => a.export_status !== 'pending');
  const deliveredIds = new Set(delivered.map((a) => a.id));
  const prices = outbox?.prices ?? [];
  const priceSet = new Set(prices);
  const missingPrices = delivered.filter((a) => !priceSet.has(a.id)).length;
  const extraPrices = [...priceSet].filter((id) => !deliveredIds.has(id)).length;
  add('outbox feed = delivered versions, each once', outbox !== null && missingPrices === 0 && extraPrices === 0 && prices.length === priceSet.size, `delivered ${delivered.length}, price rows ${prices.length} (missing ${missingPrices}, extra ${extraPrices}, twice ${prices.length - priceSet.size})`);

  const withdrawals = outbox?.withdrawals ?? [];
  const cancelledDelivered = delivered.filter((a) => a.cancelled_at !== null);
  const withdrawnSet = new Set(withdrawals);
  const missingW = cancelledDelivered.filter((a) => !withdrawnSet.has(a.id)).length;
  const wrongW = withdrawals.filter((id) => !cancelledDelivered.some((a) => a.id === id)).length;
  add('cancellations in the feed as withdrawals, each once', missingW === 0 && wrongW === 0 && withdrawals.length === withdrawnSet.size, `cancelled after delivery ${cancelledDelivered.length}, withdrawal rows ${withdrawals.length} (missing ${missingW}, wrong ${wrongW}, twice ${withdrawals.length - withdrawnSet.size})`);

  const live = delivered.filter((a) => a.cancelled_at === null && a.supersededBy === null);
  const notAcked = live.filter((a) => a.ackCount !== 1 || outbox?.ackStatus.get(a.id) !== 'acknowledged').length;
  const overAcked = approvals.filter((a) => a.ackCount > 1 || (a.ackCount > 0 && !deliveredIds.has(a.id))).length;
  const disagree = delivered.filter((a) => (a.ackCount === 1) !== (outbox?.ackStatus.get(a.id) === 'acknowledged')).length;
  const refusedResends = state.approvals.acks.reduce((n, a) => n + a.conflicting_acks, 0);
  const acceptedResends = state.approvals.acks.reduce((n, a) => n + a.repeat_acks, 0);
  add('every approval acknowledged exactly once', notAcked === 0 && overAcked === 0 && disagree === 0, `current delivered ${live.length}, acknowledged once ${live.length - notAcked}; twice or undelivered ${overAcked}; local/platform disagree ${disagree}; refused re-sends ${refusedResends}, re-sends accepted again ${acceptedResends}`);

  // 8-9. Manners towards the API.
  const early = state.rate_limit.early_requests.map((e) => {
    const at = Date.parse(e.at);
    return { ...e, trip: Math.max(...record.trips.filter((t) => t <= at)), afterMs: 0 };
  });
  for (const e of early) e.afterMs = Date.parse(e.at) - e.trip;
  const perTrip = new Map<number, number>();
  for (const e of early) perTrip.set(e.trip, (perTrip.get(e.trip) ?? 0) + 1);
  const late = early.filter((e) => e.afterMs > IN_FLIGHT_MS);
  const crowded = [...perTrip.values()].filter((n) => n > IN_FLIGHT_PER_429).length;
  const shown = [...late, ...early.filter((e) => e.afterMs <= IN_FLIGHT_MS)].slice(0, 5);
  const more = early.length > shown.length ? `, ... ${early.length - shown.length} more, the latest +${Math.max(...early.map((e) => e.afterMs))} ms` : '';
  const listed = shown.map((e) => `${e.method} ${e.path} +${e.afterMs} ms${e.afterMs > IN_FLIGHT_MS ? ` at ${e.at}` : ''}`).join(', ') + more;
  add('no request before a Retry-After expired', late.length === 0 && crowded === 0, `429 answers ${state.rate_limit.limited}; sent after a 429 was seen: ${late.length}; already in flight when the window closed: ${early.length - late.length}${listed ? ` (${listed})` : ''}`);
  add('at most 3 requests with a rejected key', state.auth.rejected_total <= 3, `rejected-key requests ${state.auth.rejected_total} (1 rotation)`);

  // 10-12. Security and shutdown.
  const leak = await filesContaining(record.dir, record.keys, [record.keyFile]);
  add('API key in no log, report, output or file', leak.hits.length === 0 && leak.scanned > 0, `files scanned ${leak.scanned} (logs, reports, rejects, database, captures), hits ${leak.hits.length}${leak.hits.length > 0 ? `: ${leak.hits.slice(0, 3).join(', ')}` : ''}`);
  const labels = metricLabelProblems(record.captures['metrics'] ?? '', { sources: Object.values(SOURCE_OF) });
  add('/metrics labels bounded (no file names, ids, paths)', record.captures['metrics'] !== undefined && labels.length === 0, labels.length === 0 ? 'all label values from bounded sets' : labels.slice(0, 3).join('; '));
  const text = [...sandbox.control.world.products.table.rows()].filter((p) => /^P\d/.test(p.item_id)).every((p) => /^Käse €\d+ Blütenhonig$/.test(p.product_name ?? ''));
  add('Windows-1252 text arrived intact', text, 'product_name "Käse €N Blütenhonig" on every product');
  add('final SIGTERM drained and exited 0', record.finalStopCode === 0, `exit code ${record.finalStopCode}`);

  const f = state.faults.injected;
  add('run', null, `seed ${record.options.seed}; ${record.kills} SIGKILLs, ${record.daemons.length} daemon starts; ${originals.length} files + ${record.drops.length - originals.length} re-drops (${record.redropsSkipped} skipped); approvals +${record.approvalsInjected} injected, ${record.amended} amended, ${record.cancelled} cancelled`);
  add('faults injected', null, `500: ${f.error_500}, 502: ${f.error_502}, 503: ${f.error_503}, dropped before commit: ${f.drop_before_commit}, after commit: ${f.drop_after_commit}; ${state.requests.total} API requests`);
  return rows;
}

/** The checks as a fixed-width text table. */
export function formatTable(rows: readonly CheckRow[]): string {
  const label = (ok: boolean | null) => (ok === null ? 'INFO' : ok ? 'PASS' : 'FAIL');
  const w = Math.max(...rows.map((r) => r.check.length), 5);
  const lines = [`| ${'check'.padEnd(w)} | result | detail |`, `|${'-'.repeat(w + 2)}|--------|--------|`];
  for (const r of rows) lines.push(`| ${r.check.padEnd(w)} | ${label(r.ok).padEnd(6)} | ${r.detail} |`);
  return lines.join('\n');
}
