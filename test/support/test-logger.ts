import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log.ts';

/** A logger whose JSON lines are kept in memory, for assertions on what was logged. */
export function captureLogger(level: 'trace' | 'debug' | 'info' = 'debug'): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      raw.push(chunk.toString());
      done();
    },
  });
  return {
    logger: createLogger({ level, destination: sink }),
    lines: () => raw.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/** Waits for a condition that depends on real I/O (file-system events), not on a timer of the code under test. */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
