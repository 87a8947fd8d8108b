/**
 * Child process of bench/sandbox-ingest.ts: serves a sandbox on a free loopback port and reports its URL and key to
 * the parent over IPC, so the load generator and the sandbox each get a core of their own; answers the parent's
 * requests for its CPU time and memory.
 */
import { parseArgs } from 'node:util';
import { startSandbox } from '../src/sandbox/index.ts';

// `--stores N`: how many stores the sandbox seeds (bench:feed scopes a consumer to each).
const { values } = parseArgs({ options: { stores: { type: 'string' } } });
const sandbox = await startSandbox({ approvals: 0, largeGridRows: 0, ...(values.stores ? { stores: Number(values.stores) } : {}) });
process.send?.({ url: sandbox.url, apiKey: sandbox.apiKey, stores: sandbox.control.stores });
// The parent asks for this process's CPU time and memory around the timed run; memory after a full collection
// (the parent forks this process with --expose-gc), so that it counts what the sandbox holds, not its garbage.
const gc = (globalThis as { gc?: () => void }).gc;
process.on('message', () => {
  const cpu = process.cpuUsage();
  gc?.();
  const memory = process.memoryUsage();
  process.send?.({ cpuMs: (cpu.user + cpu.system) / 1000, rss: memory.rss, heapUsed: memory.heapUsed, arrayBuffers: memory.arrayBuffers });
});
process.on('disconnect', () => {
  void sandbox.close().then(() => process.exit(0));
});
