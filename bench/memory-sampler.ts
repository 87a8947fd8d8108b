/**
 * Where a bench process's memory is, over time (`bench:delta --memory`): every few milliseconds the process's RSS
 * (anonymous and file-backed, from /proc/self/status), the main thread's V8 heap and the memory of its ArrayBuffers,
 * and the same for every worker thread the process starts (found through the `worker_threads` diagnostics channel,
 * read with Worker.getHeapStatistics). Only the benches use it: the agent does not sample itself.
 *
 * The main thread samples when its event loop turns (a timer), so a long synchronous stretch is seen at its end; a
 * worker answers getHeapStatistics from its own thread, busy or not.
 */
import { subscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import type { Worker } from 'node:worker_threads';

/** One sample, in MB. */
export interface MemorySample {
  readonly ms: number;
  readonly rss: number;
  readonly anon: number;
  readonly file: number;
  /** The main thread's V8 heap: committed, used; the native memory its ArrayBuffers and Buffers hold. */
  readonly heap: number;
  readonly heapUsed: number;
  readonly arrayBuffers: number;
  /** The same for the worker threads alive (summed), as they last answered. */
  readonly workerHeap: number;
  readonly workerHeapUsed: number;
  readonly workerExternal: number;
}

export interface MemoryProfile {
  readonly samples: MemorySample[];
  /** The sample of the highest RSS. */
  readonly peak: MemorySample;
  /** The highest of each series (not at one moment). */
  readonly max: Omit<MemorySample, 'ms'>;
}

const MB = 1024 * 1024;

function procStatus(): { rss: number; anon: number; file: number } {
  const text = readFileSync('/proc/self/status', 'latin1');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) / 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') };
}

interface WorkerHeap {
  heap: number;
  used: number;
  external: number;
}

export function sampleMemory(intervalMs = 10): { stop(): MemoryProfile } {
  const started = performance.now();
  const workers = new Map<Worker, WorkerHeap>();
  const onWorker = (message: unknown) => {
    const worker = (message as { worker: Worker }).worker;
    workers.set(worker, { heap: 0, used: 0, external: 0 });
    worker.once('exit', () => workers.delete(worker));
  };
  subscribe('worker_threads', onWorker);
  const samples: MemorySample[] = [];
  const sample = () => {
    const proc = procStatus();
    const heap = getHeapStatistics();
    const usage = process.memoryUsage();
    let workerHeap = 0;
    let workerHeapUsed = 0;
    let workerExternal = 0;
    for (const [worker, last] of workers) {
      workerHeap += last.heap;
      workerHeapUsed += last.used;
      workerExternal += last.external;
      worker
        .getHeapStatistics()
        .then((s) => {
          if (workers.has(worker)) workers.set(worker, { heap: s.total_heap_size / MB, used: s.used_heap_size / MB, external: s.external_memory / MB });
        })
        .catch(() => undefined);
    }
    samples.push({
      ms: performance.now() - started,
      ...proc,
      heap: heap.total_heap_size / MB,
      heapUsed: heap.used_heap_size / MB,
      arrayBuffers: usage.arrayBuffers / MB,
      workerHeap,
      workerHeapUsed,
      workerExternal,
    });
  };
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  sample();
  return {
    stop() {
      clearInterval(timer);
      sample();
      const peak = samples.reduce((a, b) => (b.rss > a.rss ? b : a));
      const keys = ['rss', 'anon', 'file', 'heap', 'heapUsed', 'arrayBuffers', 'workerHeap', 'workerHeapUsed', 'workerExternal'] as const;
      const max = Object.fromEntries(keys.map((k) => [k, Math.max(...samples.map((s) => s[k]))])) as Omit<MemorySample, 'ms'>;
      return { samples, peak, max };
    },
  };
}

/** A few lines: the peak and the highest of each series, then the samples every `everyMs`. */
export function describeMemory(profile: MemoryProfile, everyMs = 250): string {
  const f = (s: Omit<MemorySample, 'ms'>) =>
    `rss ${s.rss.toFixed(0)} (anon ${s.anon.toFixed(0)}, file ${s.file.toFixed(0)}) main heap ${s.heap.toFixed(0)} (used ${s.heapUsed.toFixed(0)}) buffers ${s.arrayBuffers.toFixed(0)} | worker heap ${s.workerHeap.toFixed(0)} (used ${s.workerHeapUsed.toFixed(0)}) external ${s.workerExternal.toFixed(0)}`;
  const lines = [`  peak at ${(profile.peak.ms / 1000).toFixed(2)} s: ${f(profile.peak)}`, `  highest of each: ${f(profile.max)}`];
  let next = 0;
  for (const s of profile.samples) {
    if (s.ms < next && s !== profile.peak) continue;
    lines.push(`  ${(s.ms / 1000).toFixed(2).padStart(6)} s ${f(s)}${s === profile.peak ? '  <- peak' : ''}`);
    next = s.ms + everyMs;
  }
  return lines.join('\n');
}
