/**
 * The child processes of the push benches (bench:push, bench:delta): a sandbox in a process of its own
 * (sandbox-server.ts), and a contender run as compiled JavaScript that answers with one message. Each process's CPU
 * and peak RSS are then its own.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';

export interface SandboxChild {
  readonly url: string;
  readonly apiKey: string;
  /** The stores it seeded (product_store rows must name one). */
  readonly stores: string[];
  stop(): Promise<void>;
}

export async function forkSandbox(): Promise<SandboxChild> {
  const child = fork(new URL('./sandbox-server.ts', import.meta.url), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [ready] = (await once(child, 'message')) as [{ url: string; apiKey: string; stores: string[] }];
  return {
    url: ready.url,
    apiKey: ready.apiKey,
    stores: ready.stores,
    stop: async () => {
      child.disconnect();
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

/**
 * The environment every launcher gives the agent (src/cli/main.ts shebang, systemd unit, Dockerfile, the packages'
 * launcher): two glibc malloc arenas. Set here unless the caller's environment sets it (an experiment).
 */
const PRODUCTION_ENV = { MALLOC_ARENA_MAX: '2' } as const;

/** Runs `worker` (a compiled bench module) with `args`; resolves to the one message it sends. */
export function runChild<T>(worker: string, args: readonly string[], execArgv: readonly string[], label: string): Promise<T> {
  const env = { ...PRODUCTION_ENV, ...process.env };
  const child = fork(worker, [...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [...execArgv], env });
  return new Promise<T>((resolve, reject) => {
    child.once('message', (m) => resolve(m as T));
    child.once('exit', (code) => reject(new Error(`${label} worker exited with ${String(code)}`)));
  });
}

/** The command-line options every push bench shares: the contenders' Node flags and a worker's own arguments. */
export const CHILD_OPTIONS = {
  // The flags the agent is deployed with (src/cli/main.ts shebang, systemd unit, Dockerfile), for every contender.
  'node-flags': { type: 'string', default: '--max-semi-space-size=8 --max-old-space-size=1536' },
  worker: { type: 'string' },
  url: { type: 'string' },
  key: { type: 'string' },
  file: { type: 'string' },
  dir: { type: 'string' },
} as const;
