/**
 * The worker thread of delta push's first pass in two halves (two-halves.ts): reads the second half of a file (the
 * header line and the half's lines), hashes every valid row into sorted runs in the scratch folder, and hands their
 * files to the main thread, which merges them with the first half's. Then, if asked, reads the source's remembered
 * keys from the SQLite state, read-only, and hands them over in pages while the main thread merges, a few pages ahead
 * at most (HalfJob.keys); or merges the upper half of the key range of both halves' runs with that half of the keys
 * and hands over its verdicts and findings (HalfJob.merge). Nothing is written: no state, no network.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { BUSINESS_KEY_FIELDS } from '../../api/schemas/index.ts';
import { keyLookup, scanDeltaKeys } from '../../store/delta-state.ts';
import { settleUndecided } from './settle-lines.ts';
import { compileSource, readRows, type ReadInit } from '../read/index.ts';
import { sortedFields } from './fast/canonical.ts';
import type { KeyPage } from './compare.ts';
import { collectHalf } from './fast/line-scan.ts';
import { mergeRuns, RUN_ENTRIES, SortedRuns } from './fast/sorted-runs.ts';
import type { JobMessage } from './spare-half.ts';
import { keyScan, pageOfTuples, StateMerge } from './state-merge.ts';
import { KEY_PAGE_SIZE, KEY_PAGES_AHEAD, MORE_KEYS, STOP_KEYS, type HalfJob, type HalfMessage, type HalfResult, type MergeOrder, type MergeResult } from './two-halves.ts';

function portOf(): NonNullable<typeof parentPort> {
  if (parentPort === null) throw new Error('half-worker.ts runs as a worker thread');
  return parentPort;
}

const port = portOf();
const send = (message: HalfMessage, transfer?: ArrayBuffer[]) => port.postMessage(message, transfer);

async function half(job: HalfJob): Promise<HalfResult> {
  const fresh = () => new SortedRuns(job.scratchDir, RUN_ENTRIES, 'half');
  let runs = fresh();
  try {
    const compiled = compileSource(job.options);
    // Line mode (compare.ts): only a row's key is converted.
    const rows = job.lineSeed === null ? { unvalidated: true } : { keysOnly: BUSINESS_KEY_FIELDS[job.entity] };
    const reader = await readRows(job.file, { ...compiled, entity: job.entity }, { name: job.name, byteRanges: job.ranges, ...rows });
    const fields = sortedFields(reader.header.fields);
    try {
      const hashing = { entity: job.entity, fields, lineSeed: job.lineSeed };
      const body = job.ranges[1];
      if (body === undefined) throw new Error('the second half has no lines');
      ({ runs } = await collectHalf({ file: job.file, body, reader, hashing, fresh: () => (runs = fresh()) }, runs));
    } finally {
      reader.close();
    }
    const { paths, count } = await runs.handOver();
    return { ok: true, paths, count, fields };
  } catch (error) {
    await runs.remove();
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** Pages the main thread may be sent beyond those it took; STOP_KEYS ends the reading. */
let credit = KEY_PAGES_AHEAD;
let stopped = false;
/** The run files to merge (HalfJob.merge), once the main thread sent them. */
let order: MergeOrder | null = null;
/** The job of a thread started ahead (spare-half.ts), once sent. */
let given: HalfJob | null = null;
let wake: (() => void) | null = null;
port.on('message', (message: unknown) => {
  if (message === MORE_KEYS) credit += 1;
  else if (message === STOP_KEYS) stopped = true;
  else if ((message as MergeOrder | null)?.kind === 'merge') order = message as MergeOrder;
  else if ((message as JobMessage | null)?.kind === 'job') given = (message as JobMessage).job;
  const w = wake;
  wake = null;
  w?.();
});

/** The scope's keys in pages, each sent once the main thread has taken all but KEY_PAGES_AHEAD of those before it. */
async function keys(path: string, scopeId: number): Promise<void> {
  /** False: stop reading. */
  const post = async (page: KeyPage): Promise<boolean> => {
    while (credit === 0 && !stopped) await new Promise<void>((resolve) => (wake = resolve));
    if (stopped) return false;
    credit -= 1;
    const buffers = [page.keyHi, page.keyLo, page.contentHi, page.contentLo, page.generation, page.fileId, page.price, page.lineHash].map((a) => a.buffer as ArrayBuffer);
    send({ kind: 'keys', page }, buffers);
    return true;
  };
  try {
    // Leaving the loop closes the connection (scanDeltaKeys' finally), also when stopped.
    for (const rows of scanDeltaKeys(path, scopeId, KEY_PAGE_SIZE)) {
      if (!(await post(pageOfTuples(rows)))) return;
    }
    send({ kind: 'keysEnd' });
  } catch (error) {
    send({ kind: 'keysFailed', error: error instanceof Error ? error.message : String(error) });
  }
}

/** Merges the non-negative half of the key range of `files` with that half of the scope's keys. */
async function mergeUpper(job: HalfJob, merge: NonNullable<HalfJob['merge']>, order: MergeOrder, fields: readonly string[]): Promise<MergeResult> {
  const lineMode = job.lineSeed !== null;
  // Asked to stop (the comparison ended): the merge fails, and the scan is closed (finally), with its connection.
  const line = lineMode ? { generation: merge.generation, fileId: merge.fileId } : null;
  const scan = keyScan(merge.path, merge.scopeId, -1n, null, line, () => stopped);
  try {
    const rules = { duplicateKeys: compileSource(job.options).duplicateKeys, refused: order.refused };
    const stateMerge = new StateMerge(merge.generation, merge.fileId, null, lineMode, rules);
    try {
      await stateMerge.run(mergeRuns(order.files, 'nonNegative'), scan.pages);
    } finally {
      scan.close();
    }
    // Line mode: the lines it left undecided, settled here while the main thread settles its own. Lines it could not
    // settle stay undecided: the main thread settles them, or compares the file by content.
    if (order.settleAtMost !== null && stateMerge.left <= order.settleAtMost && !stopped) await settleHere(job, merge, stateMerge, fields);
    return { ok: true, findings: stateMerge.findings(), verdicts: stateMerge.verdicts.bytes() };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** settleUndecided on this thread: the file read again here, the state on a read-only connection of its own. */
async function settleHere(job: HalfJob, merge: NonNullable<HalfJob['merge']>, stateMerge: StateMerge, fields: readonly string[]): Promise<void> {
  const compiled = { ...compileSource(job.options), entity: job.entity };
  const keys = keyLookup(merge.path, merge.scopeId);
  try {
    const reread = (init: ReadInit) => readRows(job.file, compiled, { name: job.name, ...init });
    await settleUndecided(stateMerge, { file: job.file, entity: job.entity, fields, reread, lookup: (keyHashes) => keys.lookup(keyHashes) });
  } finally {
    keys.close();
  }
}

/** The job: given at the start, or, to a thread started ahead, as its first message (terminated if nobody takes it). */
async function jobOf(): Promise<HalfJob> {
  if (workerData !== null) return workerData as HalfJob;
  for (;;) {
    if (given !== null) return given;
    await new Promise<void>((resolve) => (wake = resolve));
  }
}

const job = await jobOf();
const result = await half(job);
send({ kind: 'half', result });
if (result.ok && job.keys !== null && !stopped) await keys(job.keys.path, job.keys.scopeId);
if (result.ok && job.merge !== null) {
  while (order === null && !stopped) await new Promise<void>((resolve) => (wake = resolve));
  if (order !== null && !stopped) {
    const merged = await mergeUpper(job, job.merge, order, result.fields);
    send({ kind: 'merged', result: merged }, merged.ok ? [merged.verdicts.buffer as ArrayBuffer] : undefined);
  }
}
port.unref(); // nothing more to hear: the thread ends once its messages are out
