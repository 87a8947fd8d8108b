/**
 * `pricing-agent check --deep`: read-only questions to the live API, one per assumption of the agent that can be
 * checked without side effects (docs/api-assumptions.md). Each finding says what the document leaves open, what
 * this server does, and what the agent does about it. Only GET requests, and the approved prices only with
 * history=true (read-only); nothing is acknowledged, delivered or written.
 *
 * `fails` is reserved for what the agent cannot work around (it cannot read approved prices, cannot find a grid's
 * id, the key does not work); a server that merely chose differently `differs`, with the agent's way around it.
 */
import type { ApiClient } from './client.ts';
import type { ApiError } from './errors.ts';
import type { OperationName } from './operations.ts';
import { ApprovedPrice, Grid, Job, READ_DATE_TIME, readUuid } from './schemas/index.ts';
import type { ApiRequest } from './transport.ts';

export type FindingResult = 'holds' | 'differs' | 'fails' | 'skipped';

export interface Finding {
  readonly area: string;
  readonly assumption: string;
  readonly result: FindingResult;
  /** What the server did. */
  readonly observed: string;
  /** What the agent does about it (empty when it holds). */
  readonly action: string;
}

export interface DeepCheckInput {
  /** Job ids of earlier imports (the push ledger), newest first; a few are read back. */
  readonly jobIds: readonly string[];
}

const UUID_RFC = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const JOBS_READ = 3;

type Raw = Record<string, unknown>;

function isObject(value: unknown): value is Raw {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One raw GET through the client's transport (retry policy, rate gate, key), or the error it ended with. */
async function get(client: ApiClient, operation: OperationName, query: ApiRequest['query'] = {}, id?: string): Promise<{ body: unknown } | { error: ApiError | Error }> {
  try {
    const response = await client.transport.send({ operation, query, ...(id === undefined ? {} : { id }) });
    return { body: response.body };
  } catch (error) {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }
}

function rowsOf(body: unknown): { envelope: string | null; rows: unknown[] } {
  if (!isObject(body)) return { envelope: null, rows: [] };
  for (const envelope of ['items', 'data']) {
    const rows = body[envelope];
    if (Array.isArray(rows)) return { envelope, rows };
  }
  return { envelope: null, rows: [] };
}

function cursorForm(body: unknown): string {
  if (!isObject(body) || !('next_cursor' in body)) return 'absent';
  const cursor = body.next_cursor;
  if (cursor === null) return 'null';
  return cursor === '' ? 'empty string' : 'a cursor';
}

/** How a timestamp is written: with Z or an offset, with fractions of n digits. */
function dateForm(value: unknown): string {
  if (typeof value !== 'string') return 'not a string';
  if (!READ_DATE_TIME.test(value)) return `not ISO 8601 (${value.slice(0, 40)})`;
  const fraction = /\.(\d+)/.exec(value)?.[1]?.length ?? 0;
  const zone = /Z$/i.test(value) ? 'Z' : /[+-]\d\d(:?\d\d)?$/.test(value) ? 'an offset' : 'no zone';
  return `${zone}, ${fraction === 0 ? 'no fractions' : `${fraction}-digit fractions`}`;
}

export async function runDeepCheck(client: ApiClient, input: DeepCheckInput): Promise<Finding[]> {
  const findings: Finding[] = [];
  const add = (area: string, assumption: string, result: FindingResult, observed: string, action = '') =>
    findings.push({ area, assumption, result, observed, action });

  // Authentication ---------------------------------------------------------------------------------------------
  const verify = await get(client, 'auth.verify');
  if ('error' in verify) {
    add('auth', 'GET /v1/auth/verify answers 200', 'fails', verify.error.message, 'nothing works without a working key');
    return findings;
  }
  const ids = isObject(verify.body) ? [verify.body.user_id, verify.body.api_key_id] : [];
  if (ids.every((id) => typeof id === 'string' && UUID_RFC.test(id))) add('auth', 'user_id and api_key_id are UUIDs', 'holds', 'RFC 4122 UUIDs');
  else if (ids.every((id) => readUuid.safeParse(id).success)) {
    add('auth', 'user_id and api_key_id are UUIDs', 'differs', 'UUID-shaped, not RFC 4122', 'reads any UUID-shaped id');
  } else add('auth', 'user_id and api_key_id are UUIDs', 'differs', `not UUID-shaped: ${JSON.stringify(ids).slice(0, 80)}`, 'check shows them as they are; nothing else uses them');

  /** How the last pages seen ended (`a cursor`: not a last page). */
  const ends = new Set<string>();

  // Approved prices (history=true: read-only) ----------------------------------------------------------------
  const history = await get(client, 'approvedPrices.list', { history: true, limit: 20 });
  if ('error' in history) {
    add('approved prices', 'GET /v1/approved_prices?history=true answers', 'fails', history.error.message, 'the pull cannot recover or reconcile without the history');
  } else {
    const { envelope, rows } = rowsOf(history.body);
    if (envelope === null) add('approved prices', 'the list is {items, next_cursor}', 'fails', 'no list of rows under items or data', 'cannot read approved prices');
    else add('approved prices', 'the list is {items, next_cursor}', envelope === 'items' ? 'holds' : 'differs', `rows under ${envelope}`, envelope === 'items' ? '' : 'reads rows under items or data');
    const unreadable = rows.filter((row) => !ApprovedPrice.safeParse(row).success).length;
    if (rows.length === 0) add('approved prices', 'rows carry id, approved_price, currency_code, approved_at', 'skipped', 'the history is empty');
    else if (unreadable === 0) add('approved prices', 'rows carry id, approved_price, currency_code, approved_at', 'holds', `${rows.length} rows read`);
    else if (unreadable < rows.length) {
      add('approved prices', 'rows carry id, approved_price, currency_code, approved_at', 'differs', `${unreadable} of ${rows.length} rows lack one`, 'stores the others; logs and leaves those unacknowledged');
    } else add('approved prices', 'rows carry id, approved_price, currency_code, approved_at', 'fails', 'no row has them all', 'cannot put these prices in the outbox');
    const sample = rows.find(isObject);
    if (sample) {
      const nullable = ['store_id', 'effective_date', 'current_price', 'sku', 'item_id'];
      const omitted = nullable.filter((f) => rows.some((row) => isObject(row) && !(f in row)));
      add('approved prices', 'optional fields are sent as null', omitted.length === 0 ? 'holds' : 'differs', omitted.length === 0 ? 'all present' : `left out: ${omitted.join(', ')}`, omitted.length === 0 ? '' : 'reads an absent field as null');
      const form = dateForm(sample.approved_at);
      add('approved prices', 'timestamps are ISO 8601 UTC', form.startsWith('not') ? 'differs' : 'holds', `approved_at: ${form}`, 'keeps the server\'s text, compares instants');
    }
    ends.add(cursorForm(history.body));
  }

  // Record lists ----------------------------------------------------------------------------------------------
  for (const [operation, documented] of [
    ['products.list', null],
    ['productStore.list', 'items'],
    ['transactions.list', 'data'],
    ['competitorPrices.list', 'items'],
  ] as const) {
    const page = await get(client, operation, { limit: 1 });
    if ('error' in page) {
      add('mirrors', `${operation} answers`, 'differs', page.error.message, 'that mirror fails and says why; the others run');
      continue;
    }
    const { envelope } = rowsOf(page.body);
    ends.add(cursorForm(page.body));
    const expected = documented ?? 'items or data (not shown)';
    const result = envelope === null ? 'differs' : documented === null || envelope === documented ? 'holds' : 'differs';
    add('mirrors', `${operation} rows under ${expected}`, result, envelope === null ? 'no list of rows' : `rows under ${envelope}`, result === 'holds' ? '' : 'reads rows under items or data');
  }
  const since = await get(client, 'competitorPrices.list', { limit: 1, updated_after: '2000-01-01T00:00:00Z' });
  add(
    'mirrors',
    'competitor prices take updated_after (not shown)',
    'error' in since ? 'differs' : 'holds',
    'error' in since ? since.error.message : 'accepted',
    'error' in since ? 'reads the competitor prices whole each run' : '',
  );

  // Grids -----------------------------------------------------------------------------------------------------
  const grids = await get(client, 'grids.list', { limit: 10 });
  if ('error' in grids) add('grids', 'GET /v1/grids answers', 'differs', grids.error.message, 'grid mirrors fail and say why');
  else {
    const { rows } = rowsOf(grids.body);
    ends.add(cursorForm(grids.body));
    const parsed = rows.map((row) => Grid.safeParse(row));
    const first = parsed.find((p) => p.success)?.data;
    if (rows.length === 0) add('grids', 'grids in the list', 'skipped', 'no grid');
    else if (!first) add('grids', 'a grid in the list has an id', 'fails', 'neither grid_id nor id', 'cannot mirror grids');
    else {
      const named = isObject(rows[0]) && 'grid_id' in rows[0];
      add('grids', 'a grid in the list: grid_id, columns, row_count (not shown)', named && first.columns && first.row_count !== undefined ? 'holds' : 'differs',
        `id as ${named ? 'grid_id' : 'id'}; columns ${first.columns ? 'listed' : 'not listed'}; row count ${first.row_count === undefined ? 'not given' : 'given'}`,
        'reads grid_id or id; without column names a grid is mirrored as a snapshot');
      const sampleRows = await get(client, 'grids.rows', { limit: 2 }, first.grid_id);
      if ('error' in sampleRows) add('grids', 'grid rows answer', 'differs', sampleRows.error.message, 'that grid mirror fails and says why');
      else {
        const data = isObject(sampleRows.body) && Array.isArray(sampleRows.body.data) ? sampleRows.body.data.filter(isObject) : [];
        const columns = isObject(sampleRows.body) && Array.isArray(sampleRows.body.columns) ? sampleRows.body.columns.filter(isObject).map((c) => String(c.name)) : null;
        const extra = columns === null ? [] : [...new Set(data.flatMap((r) => Object.keys(r)))].filter((k) => !columns.includes(k));
        add('grids', 'rows are keyed by column name, nothing more', extra.length === 0 ? 'holds' : 'differs', extra.length === 0 ? 'only column keys' : `also: ${extra.join(', ')}`, 'keys rows by a grid_item_id column, else by row number (snapshot)');
        const keyed = columns?.includes('grid_item_id') === true;
        add('grids', 'rows can be keyed and read incrementally', 'holds', `${first.grid_id}: ${keyed ? 'has a grid_item_id column' : 'no grid_item_id column: mirrored as a snapshot'}${columns?.includes('updated_at') ? ', updated_at column' : ''}`);
      }
    }
  }

  const endings = [...ends].filter((form) => form !== 'a cursor');
  if (endings.length === 0) add('listings', 'a listing ends at next_cursor null', 'skipped', 'no last page was read');
  else {
    const other = endings.filter((form) => form !== 'null');
    add('listings', 'a listing ends at next_cursor null', other.length === 0 ? 'holds' : 'differs', `last pages: next_cursor ${endings.join(', ')}`, other.length === 0 ? '' : 'ends a listing at null, absent or empty');
  }

  // Jobs of earlier imports -----------------------------------------------------------------------------------
  if (input.jobIds.length === 0) add('jobs', 'job records of earlier imports', 'skipped', 'no import job in this agent\'s ledger');
  for (const jobId of input.jobIds.slice(0, JOBS_READ)) {
    const job = await get(client, 'jobs.get', {}, jobId);
    if ('error' in job) {
      add('jobs', `job ${jobId} can be read back`, 'differs', job.error.message, 'an import whose job cannot be read fails with the reason');
      continue;
    }
    const parsed = Job.safeParse(job.body);
    if (!parsed.success) {
      add('jobs', `job ${jobId} has job_id and status`, 'fails', 'no status', 'cannot follow import jobs');
      continue;
    }
    const j = parsed.data;
    const documented = ['queued', 'running', 'completed', 'failed'].includes(j.status);
    add('jobs', `job ${jobId}: status and progress`, documented && j.progress !== null ? 'holds' : 'differs', `status ${j.status}, progress ${String(j.progress)}`, 'maps other status names (done, error...); polls an unknown one at the queued pace');
    if (j.phase === 'failed') add('jobs', `job ${jobId}: failure detail`, j.detail.kind === 'none' ? 'differs' : 'holds', `detail: ${j.detail.kind}`, 'names the failing rows from a list, counts or a sample; says so when there is none');
  }
  return findings;
}
