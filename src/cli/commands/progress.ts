/**
 * Progress of a long one-shot command on stderr (stdout stays for the result). On a TTY: a cli-progress bar, percent
 * by bytes read, with rows and rows/s; a note (an API retry, the import job's state) replaces the rates until the
 * next update. Elsewhere (a pipe, a log file, cron): one plain line every `plainEveryMs`, so a long push still says
 * that it is alive without flooding a log with bar redraws.
 */
import { SingleBar } from 'cli-progress';

export interface ProgressSample {
  readonly bytesRead: number;
  readonly totalBytes: number;
  readonly rows: number;
}

export interface Progress {
  update(sample: ProgressSample): void;
  /** A short status ("import job running, 45%", "API 503, retrying in 4 s"), shown until the next update. */
  note(text: string): void;
  /** Removes the bar (the summary follows). Safe to call twice. */
  stop(): void;
}

export interface ProgressOptions {
  /** What is being read, e.g. the file name. */
  readonly label: string;
  readonly stream?: NodeJS.WriteStream;
  /** Milliseconds since the epoch (tests pass a fixed clock). */
  readonly now?: () => number;
  /** Interval of the plain lines when the stream is not a TTY. */
  readonly plainEveryMs?: number;
}

const PLAIN_EVERY_MS = 10_000; // 10 s

export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Rows per second since the first sample: steadier than a momentary rate, and what a person compares. */
class RowRate {
  #startAt: number | null = null;
  #startRows = 0;
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  rate(rows: number): number {
    const now = this.#now();
    if (this.#startAt === null) {
      this.#startAt = now;
      this.#startRows = rows;
      return 0;
    }
    const seconds = (now - this.#startAt) / 1000;
    return seconds > 0 ? (rows - this.#startRows) / seconds : 0;
  }
}

function percent(sample: ProgressSample): number {
  return sample.totalBytes > 0 ? Math.min(100, Math.floor((sample.bytesRead / sample.totalBytes) * 100)) : 100;
}

export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? Date.now;
  return stream.isTTY === true ? new BarProgress(options.label, stream, now) : new PlainProgress(options, stream, now);
}

class BarProgress implements Progress {
  readonly #bar: SingleBar;
  readonly #rate: RowRate;
  #started = false;
  #stopped = false;

  constructor(label: string, stream: NodeJS.WriteStream, now: () => number) {
    this.#rate = new RowRate(now);
    this.#bar = new SingleBar({
      stream,
      format: `${label} [{bar}] {percentage}% | {rows} rows | {status}`,
      barsize: 30,
      hideCursor: true,
      clearOnComplete: true,
      fps: 5,
    });
  }

  update(sample: ProgressSample): void {
    if (this.#stopped) return;
    const payload = { rows: formatCount(sample.rows), status: `${formatCount(this.#rate.rate(sample.rows))} rows/s` };
    const total = Math.max(1, sample.totalBytes);
    if (!this.#started) {
      this.#bar.start(total, sample.bytesRead, payload);
      this.#started = true;
    } else {
      this.#bar.setTotal(total);
      this.#bar.update(sample.bytesRead, payload);
    }
    // Drawn now rather than on cli-progress's own timer: updates already come at a steady pace (every 200 ms).
    this.#bar.render();
  }

  note(text: string): void {
    if (!this.#started || this.#stopped) return;
    this.#bar.update({ status: text });
    this.#bar.render();
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#started) this.#bar.stop();
  }
}

class PlainProgress implements Progress {
  readonly #label: string;
  readonly #stream: NodeJS.WriteStream;
  readonly #now: () => number;
  readonly #every: number;
  readonly #rate: RowRate;
  #lastAt: number;
  #lastRows = -1;
  #lastNote = '';

  constructor(options: ProgressOptions, stream: NodeJS.WriteStream, now: () => number) {
    this.#label = options.label;
    this.#stream = stream;
    this.#now = now;
    this.#every = options.plainEveryMs ?? PLAIN_EVERY_MS;
    this.#rate = new RowRate(now);
    this.#lastAt = now();
  }

  update(sample: ProgressSample): void {
    const rate = this.#rate.rate(sample.rows);
    // Nothing new (the import job is being polled, the API retried): the last line still holds.
    if (this.#now() - this.#lastAt < this.#every || sample.rows === this.#lastRows) return;
    this.#lastAt = this.#now();
    this.#lastRows = sample.rows;
    this.#stream.write(`${this.#label}: ${percent(sample)}%, ${formatCount(sample.rows)} rows, ${formatCount(rate)} rows/s\n`);
  }

  note(text: string): void {
    // Notes repeat on every poll or retry: a plain log gets each distinct one once.
    if (text === this.#lastNote) return;
    this.#lastNote = text;
    this.#stream.write(`${this.#label}: ${text}\n`);
  }

  stop(): void {
    // Nothing to clear: plain lines stay.
  }
}
