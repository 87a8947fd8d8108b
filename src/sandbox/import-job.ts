/**
 * Runs one import job: parses the held upload with csv-parse (comma-delimited, RFC 4180 quoting, optional BOM,
 * blank lines skipped) and checks and writes every row through the same `checkItem` and `storeItem` as a bulk row, so imported rows land in
 * the same store under the same rules (business-key upsert; product_store unknown_store and duplicate_key within
 * the file).
 *
 * When a job fails rather than completing with row errors (our choice, docs/sandbox.md):
 * - failed, before any row is written: a required column is missing from the header, a header name is repeated (ignoring case) or
 *   blank, or (for every entity but products, whose extra columns are custom columns) a column is unknown;
 * - failed, rows before it stay written: a CSV syntax error (e.g. an unclosed quote); `error` names the line;
 * - completed with row errors otherwise (validation_error, unknown_store, duplicate_key, column_count); or, in a
 *   dialect whose jobs are all or nothing (`allOrNothing`), failed with nothing written when any row is refused:
 *   every row is checked first, and written only when all passed.
 * Line numbers are physical CSV lines, the header being line 1.
 */
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import type { Clock } from '../clock.ts';
import type { TableRow } from './entity-table.ts';
import { checkItem, storeItem, type CheckedItem } from './crud.ts';
import type { CsvUpload } from './import-upload.ts';
import { finishJob, recordRowError, startJob, type JobPace, type JobRecord } from './jobs.ts';
import type { Resource } from './resource.ts';

interface CsvRecord {
  record: string[];
  info: { lines: number; bytes: number };
}

/** In instant mode, let other requests in every this many rows. */
const INSTANT_YIELD_ROWS = 2000;

function headerProblem(header: readonly string[], required: readonly string[], known: readonly string[] | null): string | null {
  const seen = new Set<string>();
  // Names are told apart ignoring case, as the server does (issue 28: a Shopify `Status` custom column beside the
  // agent's `status` failed the import).
  const seenIgnoringCase = new Map<string, string>();
  for (const name of header) {
    if (name === '') return 'the header has a blank column name';
    if (seen.has(name)) return `column '${name}' appears twice in the header`;
    const other = seenIgnoringCase.get(name.toLowerCase());
    if (other !== undefined) return `columns '${other}' and '${name}' differ only in case`;
    seen.add(name);
    seenIgnoringCase.set(name.toLowerCase(), name);
  }
  const missing = required.filter((name) => !seen.has(name));
  if (missing.length > 0) return `missing required column(s): ${missing.join(', ')}`;
  if (known !== null) {
    const knownSet = new Set(known);
    const unknown = header.filter((name) => !knownSet.has(name));
    if (unknown.length > 0) return `unknown column(s): ${unknown.join(', ')}`;
  }
  return null;
}

async function pause(pace: JobPace, clock: Clock, signal: AbortSignal, ms: number): Promise<void> {
  if (pace === 'instant') await new Promise<void>((resolve) => setImmediate(resolve));
  else await clock.sleep(ms, signal);
}

export async function runImportJob<R extends TableRow, W>(
  job: JobRecord,
  resource: Resource<R, W>,
  upload: CsvUpload,
  pace: JobPace,
  clock: Clock,
  signal: AbortSignal,
  allOrNothing = false,
): Promise<void> {
  await pause(pace, clock, signal, pace === 'instant' ? 0 : pace.queuedMs);
  startJob(job, clock.now());
  const rowsPerTick = pace === 'instant' ? INSTANT_YIELD_ROWS : Math.max(1, pace.rowsPerTick);
  const parser = Readable.from(upload.chunks, { objectMode: false }).pipe(
    parse({ bom: true, relax_column_count: true, skip_empty_lines: true, info: true }),
  );
  let header: string[] | null = null;
  const seen = resource.rejectDuplicateKeys ? new Set<string>() : null;
  let rows = 0;
  /** All or nothing: the checked rows, written once every row passed. */
  const held: CheckedItem<W>[] | null = allOrNothing ? [] : null;
  try {
    for await (const { record, info } of parser as AsyncIterable<CsvRecord>) {
      if (signal.aborted) return;
      if (header === null) {
        header = record.map((name) => name.trim());
        const problem = headerProblem(header, resource.requiredColumns, resource.knownColumns);
        if (problem !== null) {
          parser.destroy();
          finishJob(job, clock.now(), problem);
          return;
        }
        continue;
      }
      rows += 1;
      const checked = checkRecord(job, resource, header, record, info.lines, rows, seen);
      if (checked !== null) {
        if (held !== null) held.push(checked);
        else {
          storeItem(resource, checked, clock.now());
          job.rows_ok += 1;
        }
      }
      job.progress = Math.min(99, Math.floor((info.bytes / upload.bytes) * 100));
      if (rows % rowsPerTick === 0) await pause(pace, clock, signal, pace === 'instant' ? 0 : pace.tickMs);
    }
  } catch (error) {
    if (signal.aborted) return;
    finishJob(job, clock.now(), `CSV error: ${error instanceof Error ? error.message : String(error)}`);
    job.rows_total = rows;
    return;
  }
  if (header === null) {
    finishJob(job, clock.now(), 'the file has no header row');
    return;
  }
  job.rows_total = rows;
  if (held !== null) {
    if (job.rows_failed > 0) {
      finishJob(job, clock.now(), `${job.rows_failed} of ${rows} rows were refused; nothing of this file was written`);
      return;
    }
    for (const checked of held) {
      storeItem(resource, checked, clock.now());
      job.rows_ok += 1;
      if (job.rows_ok % rowsPerTick === 0) await pause(pace, clock, signal, pace === 'instant' ? 0 : pace.tickMs);
      if (signal.aborted) return;
    }
  }
  finishJob(job, clock.now(), null);
}

/** Checks one data row (`row`: its number among the data rows); records why it is refused and returns null. */
function checkRecord<R extends TableRow, W>(
  job: JobRecord,
  resource: Resource<R, W>,
  header: readonly string[],
  record: readonly string[],
  line: number,
  row: number,
  seen: Set<string> | null,
): CheckedItem<W> | null {
  if (record.length !== header.length) {
    recordRowError(job, line, row, 'column_count', `expected ${header.length} fields, found ${record.length}`);
    return null;
  }
  const cells: Record<string, string> = {};
  for (let i = 0; i < header.length; i += 1) {
    const value = record[i]!;
    if (value !== '') cells[header[i]!] = value;
  }
  const checked = checkItem(resource, resource.fromCsv(cells), null, seen);
  if ('write' in checked) return checked;
  recordRowError(job, line, row, checked.code, checked.message);
  return null;
}
