/**
 * What the console shows, read with the functions `pricing-agent status` and `files` use (src/status/): the same
 * StatusReport as `status --json`, the same file list and file detail as `files list/show --json`. The only
 * difference is where the live parts come from: the key's state and the readiness are the daemon's own (the console
 * runs inside it), so a page view never calls the API. Every read opens the state database read-only, like the
 * commands do, and closes it again.
 */
import { readFile } from 'node:fs/promises';
import type { Config } from '../config/index.ts';
import type { Readiness } from '../status/readiness.ts';
import { readRejectsHeader } from '../ingest/file/rejects-csv.ts';
import type { DaemonCheck } from '../status/daemon-probe.ts';
import { heldDetail, heldFileList, type HeldDetail } from '../status/held-files.ts';
import { listFiles, reportFiles, showFile, type FileDetail, type FileListItem, type ListFilter } from '../status/file-list.ts';
import { buildReport, gatherDatabaseParts, withStateDatabase, type KeyCheck, type StatusReport } from '../status/status-report.ts';

export interface ConsoleContext {
  /** The config in force (a SIGHUP reload replaces it). */
  readonly config: () => Config;
  readonly now: () => Date;
  /** What the daemon's /readyz answers, and its lifecycle state. */
  readonly readiness: () => Readiness;
  readonly agentState: () => string;
  readonly readyzUrl: () => string | null;
  /** The key as the daemon's key monitor knows it. */
  readonly apiKey: () => KeyCheck;
  /** The agent's role in a high-availability pair, once it has one (issue 15); undefined: not shown. */
  readonly role?: () => string | undefined;
}

/** The agent at a glance: exactly `status --json`'s object, with the daemon's own key state and readiness. */
export async function consoleStatus(ctx: ConsoleContext): Promise<StatusReport> {
  const config = ctx.config();
  const now = ctx.now();
  const parts = await gatherDatabaseParts(config, now);
  const readiness = ctx.readiness();
  const daemon: DaemonCheck = {
    state: readiness.ready ? 'ready' : 'not_ready',
    url: ctx.readyzUrl(),
    agent_state: ctx.agentState(),
    reasons: readiness.reasons,
  };
  return buildReport(config, now, parts, ctx.apiKey(), daemon);
}

/** A listed file with its report and rejects, where they exist. */
export type ConsoleFile = FileListItem & {
  report_path: string | null;
  rejects_path: string | null;
  /** For a file the brakes hold and nobody released yet: what sends it after all. */
  release_command: string | null;
};

export async function consoleFiles(ctx: ConsoleContext, filter: ListFilter): Promise<ConsoleFile[]> {
  const { items, held } = await withStateDatabase(ctx.config(), async (db) =>
    db ? { items: await listFiles(db, filter), held: await heldFileList(db) } : { items: [], held: [] },
  );
  const commands = new Map(held.map((f) => [f.id, f.release_command]));
  return Promise.all(items.map(async (item) => ({ ...item, ...(await reportFiles(item.final_path)), release_command: commands.get(item.id) ?? null })));
}

export interface ConsoleFileDetail extends FileDetail {
  /** The report's JSON as written (null: no report, or it could not be read). */
  report_text: string | null;
  /** A file the brakes hold: its preview and its release command (null: not held). */
  held: HeldDetail | null;
  /** The file's own column names, from its rejects CSV (null: no rejects file). */
  columns: string[] | null;
}

export async function consoleFile(ctx: ConsoleContext, id: number): Promise<ConsoleFileDetail | undefined> {
  const found = await withStateDatabase(ctx.config(), async (db) => {
    const shown = db ? await showFile(db, id) : undefined;
    return shown === undefined || db === null ? undefined : { shown, held: await heldDetail(db, id) };
  });
  if (found === undefined) return undefined;
  const { shown: detail, held } = found;
  const report_text = detail.report_path === null ? null : await readFile(detail.report_path, 'utf8').catch(() => null);
  const header = detail.rejects_path === null ? null : await readRejectsHeader(detail.rejects_path);
  return { ...detail, report_text, held, columns: header === null ? null : header.headers };
}
