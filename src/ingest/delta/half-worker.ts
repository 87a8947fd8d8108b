/**
 * The worker thread of delta push's first pass in two halves (two-halves.ts): reads the second half of a file (the
 * header line and the half's lines), hashes every valid row into sorted runs in the scratch folder, and hands their
 * files to the main thread, which merges them with the first half's. Nothing else: no state, no network.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { BUSINESS_KEYS } from '../../api/schemas/index.ts';
import { compileSource, readRows } from '../read/index.ts';
import { sortedFields } from './canonical.ts';
import { collectRows } from './compare.ts';
import { RUN_ENTRIES, SortedRuns } from './sorted-runs.ts';
import type { HalfJob, HalfResult } from './two-halves.ts';

async function run(job: HalfJob): Promise<HalfResult> {
  const runs = new SortedRuns(job.scratchDir, RUN_ENTRIES, 'half');
  try {
    const compiled = compileSource(job.options);
    const reader = await readRows(job.file, { ...compiled, entity: job.entity }, { name: job.name, unvalidated: true, byteRanges: job.ranges });
    const fields = sortedFields(reader.header.fields);
    try {
      await collectRows({ entity: job.entity, fields, keyOf: BUSINESS_KEYS[job.entity] }, reader.chunks(), runs);
      if (!reader.summary().complete) throw new Error('the second half was not read to its end');
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

parentPort?.postMessage(await run(workerData as HalfJob));
