/**
 * The push command's progress output: a bar with percent by bytes, rows and rows/s on a TTY; plain lines at a slow
 * pace otherwise. A fake clock drives the rate; the streams are in memory.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress } from '../../src/cli/commands/progress.ts';

function sink(tty: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  Object.assign(stream, { isTTY: tty, columns: 120 });
  // eslint-disable-next-line no-control-regex
  return { stream, text: () => chunks.join('').replace(/\u001b(\[[0-9;?]*[A-Za-z]|[78])/g, '') };
}

/** A progress of tx.csv (1000 bytes) on an in-memory stream, updated once at time 0 with nothing read; `at` sets the fake clock. */
function started(tty: boolean) {
  let now = 0;
  const out = sink(tty);
  const progress = createProgress({ label: 'tx.csv', stream: out.stream, now: () => now });
  progress.update({ bytesRead: 0, totalBytes: 1000, rows: 0 });
  return { progress, text: out.text, at: (ms: number) => (now = ms) };
}

describe('push progress', () => {
  it('draws a bar on a TTY: percent by bytes, rows, rows/s, and a note in place of the rate', () => {
    const { progress, text, at } = started(true);
    at(2000);
    progress.update({ bytesRead: 500, totalBytes: 1000, rows: 10_000 });
    expect(text()).toMatch(/tx\.csv \[=+-+\] 50% \| 10,000 rows \| 5,000 rows\/s/);
    progress.note('import job running, 40%');
    expect(text()).toMatch(/50% \| 10,000 rows \| import job running, 40%/);
    progress.stop();
    progress.stop();
  });

  it('writes a plain line at most every 10 s elsewhere, only when rows moved, and each distinct note once', () => {
    const { progress, text, at } = started(false);
    at(5000);
    progress.update({ bytesRead: 300, totalBytes: 1000, rows: 30_000 });
    expect(text()).toBe('');
    at(10_000);
    progress.update({ bytesRead: 600, totalBytes: 1000, rows: 60_000 });
    at(25_000);
    progress.update({ bytesRead: 600, totalBytes: 1000, rows: 60_000 });
    progress.note('import job queued');
    progress.note('import job queued');
    progress.note('import job running, 10%');
    expect(text()).toBe('tx.csv: 60%, 60,000 rows, 6,000 rows/s\ntx.csv: import job queued\ntx.csv: import job running, 10%\n');
  });
});
