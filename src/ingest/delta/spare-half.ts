/**
 * The thread of a large file's second half (half-worker.ts, two-halves.ts), started ahead: while a file is claimed
 * (read whole for its hash) the other core is idle, so a thread started then has loaded its modules (about a fifth of
 * a second) when the comparison begins, and the file is cut nearer its middle. At most one waits. Until it is given a
 * job it keeps nothing alive (unref'd) and has opened nothing: one nobody takes is terminated.
 */
import { Worker } from 'node:worker_threads';
import type { HalfJob } from './two-halves.ts';

/** The worker's module, next to this one (TypeScript sources in development, JavaScript once built). */
const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './half-worker.ts' : './half-worker.js', import.meta.url);

/** What the main thread sends a thread started ahead: its job (a thread started for a job gets it as workerData). */
export interface JobMessage {
  readonly kind: 'job';
  readonly job: HalfJob;
}

/** A thread started ahead. */
export interface Spare {
  readonly worker: Worker;
  exited: boolean;
}

let spare: Spare | null = null;

function start(job: HalfJob | null): Worker {
  return new Worker(WORKER_URL, { workerData: job, stdout: false, stderr: false });
}

/** Starts a thread ahead, unless one waits already (then null). */
export function prestartHalf(): Spare | null {
  if (spare !== null && !spare.exited) return null;
  const started: Spare = { worker: start(null), exited: false };
  started.worker.unref();
  // A thread that fails to start is simply not used: the next file's first pass starts its own.
  started.worker.on('error', () => undefined);
  started.worker.once('exit', () => {
    started.exited = true;
  });
  spare = started;
  return started;
}

/** Whether a thread started ahead waits (the first pass cuts the file nearer its middle then). */
export function spareWaiting(): boolean {
  return spare !== null && !spare.exited;
}

/** Ends `started` (prestartHalf), if nobody took it. */
export async function dropSpareHalf(started: Spare | null): Promise<void> {
  if (started === null || spare !== started) return;
  spare = null;
  if (!started.exited) await started.worker.terminate();
}

/** The thread for `job`: the one started ahead, given `job` as its first message, or a new one. */
export function halfThread(job: HalfJob): Worker {
  const taken = spare;
  spare = null;
  if (taken === null || taken.exited) return start(job);
  taken.worker.removeAllListeners('error');
  taken.worker.ref();
  taken.worker.postMessage({ kind: 'job', job } satisfies JobMessage);
  return taken.worker;
}
