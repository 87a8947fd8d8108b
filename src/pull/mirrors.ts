/**
 * Incremental mirrors: each stream's listing since its watermark, page by page into its mirror table.
 *
 * A listing's life (state in stream_state, src/store/mirrors.ts):
 * - starts with `updated_after` = the watermark (inclusive, so the rows at the watermark come again and the upsert
 *   absorbs them), or without it the first time and after `--full`;
 * - each page is upserted with the next cursor in one transaction: the checkpoint moves only with the rows it
 *   stands for, and a restart continues from the last committed cursor with the same watermark;
 * - when the server says the listing is complete, the watermark moves to the largest updated_at seen (or, for rows
 *   without one, the server's Date of the listing's first page) and the cursor is cleared.
 * A crash after the last page committed but before the watermark moved leaves a listing with no cursor: the next run
 * completes it without reading anything.
 */
import { completeListing, recordStreamError, resetStream, restartListing, streamState, upsertMirrorPage } from '../store/mirrors.ts';
import type { MirrorStream } from '../store/mirror-tables.ts';
import { MirrorExport } from './mirror-export.ts';
import { fixedSource, gridSources, type ListingSource, type MirrorConfig } from './mirror-sources.ts';
import { checkAborted, type PullDeps } from './pull-deps.ts';
import { isRefusedCursor, refusesParameter } from './refusals.ts';

export interface MirrorRunOptions {
  /** Forget the watermark and cursor first (`pull --stream NAME --full`); rows already mirrored stay. */
  readonly full?: boolean;
  /** For the grids entry: only this grid id. */
  readonly gridId?: string;
}

export interface StreamRunSummary {
  stream: MirrorStream;
  /** The listing continued from a stored cursor. */
  resumed: boolean;
  pages: number;
  rows: number;
  /** `updated_after` the listing ran with (null: everything). */
  updatedAfter: string | null;
  /** The watermark after the run. */
  watermark: string | null;
  exportFile: string | null;
  error: string | null;
}

/**
 * Runs one configured `pull.mirrors` entry: one stream, or for `grids` one listing per grid (each its own stream
 * with its own watermark). A stream that fails records its error and does not stop the other grids; the first
 * error is thrown after all have run.
 */
export async function runMirror(
  deps: PullDeps,
  config: MirrorConfig,
  signal?: AbortSignal,
  options: MirrorRunOptions = {},
): Promise<StreamRunSummary[]> {
  let sources: ListingSource[];
  const summaries: StreamRunSummary[] = [];
  if (config.stream === 'grids') {
    const grids = await gridSources(deps, config, signal, options.gridId);
    for (const id of grids.missing) {
      const error = `grid ${id} is not in the grids list of this API key`;
      deps.logger.warn({ stream: `grid:${id}` }, error);
      summaries.push({ ...emptySummary(`grid:${id}`), error });
    }
    sources = grids.sources;
  } else {
    sources = [fixedSource(deps, config)];
  }
  let failure: Error | undefined;
  for (const source of sources) {
    try {
      summaries.push(await runListing(deps, source, config.export, signal, options.full ?? false));
    } catch (error) {
      if (signal?.aborted) throw error;
      const message = (error as Error).message;
      await recordStreamError(deps.db, source.stream, message);
      deps.logger.warn({ stream: source.stream, error: message }, 'mirror listing failed; it resumes next run');
      summaries.push({ ...emptySummary(source.stream), error: message });
      failure ??= error instanceof Error ? error : new Error(message);
    }
  }
  if (failure !== undefined) throw failure;
  return summaries;
}

async function runListing(
  deps: PullDeps,
  source: ListingSource,
  exportDir: string | null,
  signal: AbortSignal | undefined,
  full: boolean,
): Promise<StreamRunSummary> {
  const { db } = deps;
  const { stream } = source;
  if (full) await resetStream(db, stream);
  let state = await streamState(db, stream);
  const started = deps.clock.now();
  let updatedAfter = source.incremental ? (state?.watermark ?? undefined) : undefined;
  const summary: StreamRunSummary = {
    ...emptySummary(stream),
    resumed: state?.listing_started_at != null,
    updatedAfter: updatedAfter ?? null,
  };
  let exporter =
    exportDir !== null && state?.listing_started_at != null
      ? new MirrorExport(exportDir, stream, state.listing_started_at)
      : null;
  const rowNumbers = source.keys === 'row_number';
  // A listing whose last page is committed (no cursor left) only needs completing.
  let complete = state?.listing_started_at != null && state.cursor === null;
  while (!complete) {
    let firstPage = true;
    try {
      for await (const page of source.pages(updatedAfter, state?.cursor ?? undefined, signal)) {
        firstPage = false;
        const listingStartedAt = (page.serverDate ?? new Date(deps.clock.now())).toISOString();
        if (exportDir !== null && exporter === null) exporter = new MirrorExport(exportDir, stream, listingStartedAt);
        await exporter?.append(page.items);
        await upsertMirrorPage(db, stream, page.items, page.nextCursor, { listingStartedAt, rowNumbers });
        summary.pages += 1;
        summary.rows += page.items.length;
        checkAborted(signal);
      }
      complete = true;
    } catch (error) {
      // The ways out of a listing the server refuses at its first request; anything else is the run's error.
      if (!firstPage) throw error;
      if (state?.cursor != null && isRefusedCursor(error)) {
        deps.logger.warn({ stream, error: (error as Error).message }, 'the server no longer accepts the stored cursor: the listing starts again');
        state = await restartListing(db, stream);
        summary.resumed = false;
        continue;
      }
      if (updatedAfter !== undefined && refusesParameter(error, 'updated_after')) {
        deps.logger.warn({ stream }, 'the server refuses updated_after on this list: reading it whole');
        updatedAfter = undefined;
        summary.updatedAfter = null;
        continue;
      }
      throw error;
    }
  }
  summary.exportFile = (await exporter?.finish()) ?? null;
  summary.watermark = (await completeListing(db, stream, { keys: source.keys })).watermark;
  deps.logger.info(
    {
      stream,
      resumed: summary.resumed,
      pages: summary.pages,
      rows: summary.rows,
      updated_after: summary.updatedAfter,
      watermark: summary.watermark,
      export_file: summary.exportFile,
      duration_ms: deps.clock.now() - started,
    },
    'mirror listing complete',
  );
  return summary;
}

function emptySummary(stream: MirrorStream): StreamRunSummary {
  return {
    stream,
    resumed: false,
    pages: 0,
    rows: 0,
    updatedAfter: null,
    watermark: null,
    exportFile: null,
    error: null,
  };
}
