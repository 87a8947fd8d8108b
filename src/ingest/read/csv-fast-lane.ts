/**
 * The CSV records of a file: split directly while the text holds no quote character, handed to csv-parse from the
 * line of the first quote on. Most ERP exports never quote a field, and splitting a line on its delimiter costs a
 * fraction of csv-parse's per-row work (bench:delta reads every row twice, bench:push once: docs/performance.md).
 *
 * Without a quote, csv-parse with the reader's options (parser.ts: record delimiters CRLF, LF and CR, no `columns`,
 * blank lines kept) yields exactly the lines of the text split on the delimiter; test/ingest/csv-fast-lane.test.ts
 * pins that against csv-parse itself on random texts and random chunkings. Whatever could differ goes to csv-parse
 * whole: every line from the first one that holds a quote to the end of the file, and a line longer than
 * MAX_RECORD_BYTES (which csv-parse fails as RECORD_TOO_LARGE).
 *
 * Memory: the records of one chunk at a time (the next chunk is read when they are taken), then csv-parse's own
 * backpressure (drainingRecords).
 */
import { pipeline } from 'node:stream';
import type { Parser } from 'csv-parse';
import type { DetectedDelimiter } from './delimiter.ts';
import type { Chunk } from './open-source.ts';
import { createParser, MAX_RECORD_BYTES, type Parsed } from './parser.ts';

/**
 * Consecutive lines of the fast lane the reader was told it will not read (skipUnread), handed out as one record:
 * each of them is one line.
 */
export class UnreadLines {
  readonly count: number;
  constructor(count: number) {
    this.count = count;
  }
}

/** A record of the stream: its fields, or a run of lines not read. */
export type StreamRecord = Parsed | UnreadLines;

/** Records in file order: `take` without waiting, `next` waiting for the file; errors come from `next`. */
export interface RecordStream {
  /** A record ready now, or undefined (then `next` reads on). */
  take(): StreamRecord | undefined;
  next(): Promise<IteratorResult<StreamRecord>>;
  /** Records handed out and bytes consumed so far, counted as csv-parse counts them (UTF-8 bytes of the text). */
  counts(): { records: number; bytes: number };
  /**
   * False while the records handed out are the fast lane's own (one line each, no quote: no line break in a field);
   * true once they may come from csv-parse.
   */
  parsing(): boolean;
  /**
   * From now on, consecutive lines of the fast lane for which `unread(line)` holds are handed out as UnreadLines, not
   * split (record-source.ts skipUnread). The fast lane's records are one line each, so the nth record is on line n.
   * A UTF-8 chunk without a quote or a CR is then looked at as bytes: a line not read is never decoded.
   */
  skipUnread(unread: (line: number) => boolean): void;
}

const RECORD_BREAK = /\r\n|\n|\r/;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;

/** Where the text's last complete record ends (after its break), or 0. A final CR may be the start of a CRLF. */
function completeEnd(text: string): number {
  const lf = text.lastIndexOf('\n');
  // Only a CR after the last LF matters: searching the tail, not the whole chunk of an LF file.
  const tail = lf < 0 ? text : text.slice(lf + 1);
  const cr = tail.lastIndexOf('\r');
  if (cr < 0) return lf + 1;
  if (cr < tail.length - 1) return lf + 1 + cr + 1;
  const previous = cr === 0 ? -1 : tail.lastIndexOf('\r', cr - 1);
  return previous < 0 ? lf + 1 : lf + 1 + previous + 1;
}

export function csvRecordStream(chunks: AsyncIterable<Chunk>, delimiter: DetectedDelimiter): RecordStream {
  const source: AsyncIterator<Chunk, unknown> = chunks[Symbol.asyncIterator]();
  let queue: StreamRecord[] = [];
  let head = 0;
  let rest = '';
  /** The unfinished last line, while chunks are looked at as bytes (rest is '' meanwhile). */
  let restBytes: Buffer | null = null;
  let records = 0;
  let bytes = 0;
  let ended = false;
  let slow: { parser: Parser; records: DrainingRecords } | null = null;
  let unread: ((line: number) => boolean) | null = null;

  /** Hands out the records of `text`: complete lines, or the file's last line at its end. */
  const split = (text: string): void => {
    if (text === '') return;
    if (unread !== null && !text.includes('\r')) splitSkipping(text, unread);
    else {
      const lines = text.split(RECORD_BREAK);
      if (lines.at(-1) === '') lines.pop(); // the text ends with a break: nothing after it
      if (unread === null) for (const line of lines) queue.push(line.split(delimiter));
      else {
        const skip = unread;
        // `records` lines came before this text: its first line is line records + 1.
        let skipped = 0;
        for (let i = 0; i < lines.length; i++) {
          if (skip(records + i + 1)) skipped++;
          else {
            if (skipped > 0) queue.push(new UnreadLines(skipped));
            skipped = 0;
            queue.push((lines[i] as string).split(delimiter));
          }
        }
        if (skipped > 0) queue.push(new UnreadLines(skipped));
      }
      records += lines.length;
    }
    bytes += Buffer.byteLength(text);
  };

  /** `split` for a text whose only breaks are LFs: a line not to be read is not even cut out of the text. */
  const splitSkipping = (text: string, skip: (line: number) => boolean): void => {
    let start = 0;
    let line = records;
    let skipped = 0;
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      line += 1;
      if (skip(line)) skipped++;
      else {
        if (skipped > 0) queue.push(new UnreadLines(skipped));
        skipped = 0;
        queue.push(text.slice(start, end).split(delimiter));
      }
      start = end + 1;
    }
    if (skipped > 0) queue.push(new UnreadLines(skipped));
    records = line;
  };

  /**
   * `splitSkipping` for UTF-8 bytes without a quote or a CR, `bytes[0, end)` (complete lines, or the file's last line
   * at its end): a line not to be read is never decoded; the others are decoded and split as `split` would.
   */
  const splitBytesSkipping = (chunk: Buffer, end: number, skip: (line: number) => boolean): void => {
    let start = 0;
    let line = records;
    let skipped = 0;
    while (start < end) {
      let stop = chunk.indexOf(LF, start);
      if (stop < 0 || stop > end) stop = end;
      line += 1;
      if (skip(line)) skipped++;
      else {
        if (skipped > 0) queue.push(new UnreadLines(skipped));
        skipped = 0;
        queue.push(chunk.toString('utf8', start, stop).split(delimiter));
      }
      start = stop + 1;
    }
    if (skipped > 0) queue.push(new UnreadLines(skipped));
    records = line;
    bytes += end;
  };

  /** csv-parse for `text` and every chunk after it. */
  const toParser = (text: string): void => {
    const parser = createParser(delimiter);
    async function* remaining(): AsyncGenerator<Chunk> {
      if (text !== '') yield text;
      for (;;) {
        const next = await source.next();
        if (next.done === true) return;
        yield next.value;
      }
    }
    // Errors (a decode error, a broken quote) reach the reader through the records' iterator.
    pipeline(remaining(), parser, () => undefined);
    slow = { parser, records: drainingRecords(parser) };
  };

  /**
   * Skipping lines (skipUnread) in a UTF-8 chunk: as bytes, when it and the unfinished line before it hold no quote
   * and no CR and that line is not too long for the fast lane (the rules of the text below, which bytes only meet
   * earlier: a character is at least a byte). False: read it as text.
   */
  const pullBytes = (chunk: Buffer, skip: (line: number) => boolean): boolean => {
    const head = restBytes;
    if (chunk.indexOf(QUOTE) >= 0 || chunk.indexOf(CR) >= 0) return false;
    if (head !== null && (head.indexOf(QUOTE) >= 0 || head.indexOf(CR) >= 0)) return false;
    const last = chunk.lastIndexOf(LF);
    if (last < 0) {
      // No line ends in this chunk: all of it joins the unfinished line.
      if ((head?.length ?? 0) + chunk.length > MAX_RECORD_BYTES) return false;
      restBytes = head === null ? Buffer.from(chunk) : Buffer.concat([head, chunk]);
      return true;
    }
    if (chunk.length - (last + 1) > MAX_RECORD_BYTES) return false;
    if (head === null) splitBytesSkipping(chunk, last + 1, skip);
    else {
      // The unfinished line and its end are joined alone, not the chunk: a copy of one line, not of every chunk.
      const first = chunk.indexOf(LF);
      const line = Buffer.concat([head, chunk.subarray(0, first + 1)]);
      splitBytesSkipping(line, line.length, skip);
      splitBytesSkipping(chunk.subarray(first + 1), last - first, skip);
    }
    // Copied: a view would keep the whole chunk alive until the next one.
    restBytes = last + 1 < chunk.length ? Buffer.from(chunk.subarray(last + 1)) : null;
    return true;
  };

  const pull = async (): Promise<void> => {
    const next = await source.next();
    if (next.done === true) {
      ended = true;
      if (restBytes !== null && unread !== null) splitBytesSkipping(restBytes, restBytes.length, unread);
      else if (restBytes !== null) split(restBytes.toString('utf8'));
      restBytes = null;
      split(rest);
      rest = '';
      return;
    }
    const chunk = next.value;
    if (unread !== null && typeof chunk !== 'string') {
      // The unfinished line so far (whole characters, a line break not yet seen) joins the bytes.
      if (rest !== '') restBytes = Buffer.from(rest, 'utf8');
      rest = '';
      if (pullBytes(chunk, unread)) return;
    }
    const before = restBytes === null ? rest : restBytes.toString('utf8');
    restBytes = null;
    const text = before + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    const quote = text.indexOf('"');
    if (quote >= 0) {
      const lineStart = Math.max(text.lastIndexOf('\n', quote), text.lastIndexOf('\r', quote)) + 1;
      split(text.slice(0, lineStart));
      rest = '';
      toParser(text.slice(lineStart));
      return;
    }
    const end = completeEnd(text);
    if (text.length - end > MAX_RECORD_BYTES) {
      split(text.slice(0, end));
      rest = '';
      toParser(text.slice(end));
      return;
    }
    split(text.slice(0, end));
    rest = text.slice(end);
  };

  const take = (): StreamRecord | undefined => {
    if (head < queue.length) {
      const record = queue[head++] as StreamRecord;
      if (head === queue.length) {
        queue = [];
        head = 0;
      }
      return record;
    }
    return slow?.records.take();
  };

  return {
    take,
    async next(): Promise<IteratorResult<StreamRecord>> {
      for (;;) {
        const record = take();
        if (record !== undefined) return { value: record, done: false };
        if (slow !== null) return (slow as { records: DrainingRecords }).records.next();
        if (ended) return { value: undefined, done: true };
        await pull();
      }
    },
    skipUnread(predicate) {
      unread = predicate;
    },
    parsing() {
      // The queue is used up before csv-parse's first record is handed out; an empty queue may also mean its last
      // record was just taken (then this errs on the safe side).
      return slow !== null && head >= queue.length;
    },
    counts() {
      const info = (slow as { parser: Parser } | null)?.parser.info;
      return { records: records + (info?.records ?? 0), bytes: bytes + (info?.bytes ?? 0) };
    },
  };
}

/** Records the reader may hold before it pauses the parser (backpressure; memory stays bounded). */
export const QUEUED_RECORDS = 256;

/**
 * The parser's records as an async iterator that yields every record parsed before an error, then throws it. A
 * stream's own async iterator rejects as soon as the stream errors and drops the records still buffered, so the
 * line reported for an unclosed quote depended on how fast the consumer had read the rows before it.
 */
interface DrainingRecords extends AsyncIterator<Parsed> {
  /** A queued record, without waiting; undefined when none is queued (an error or the end is left to `next`). */
  take(): Parsed | undefined;
}

function drainingRecords(parser: Parser): DrainingRecords {
  const queue: Parsed[] = [];
  let failure: { error: unknown } | null = null;
  let ended = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  parser.on('data', (record: Parsed) => {
    queue.push(record);
    if (queue.length >= QUEUED_RECORDS) parser.pause();
    notify();
  });
  parser.on('error', (error: unknown) => {
    failure = { error };
    notify();
  });
  parser.on('end', () => {
    ended = true;
    notify();
  });
  const take = (): Parsed | undefined => {
    const record = queue.shift();
    if (record !== undefined && queue.length < QUEUED_RECORDS / 2 && parser.isPaused()) parser.resume();
    return record;
  };
  return {
    take,
    async next(): Promise<IteratorResult<Parsed>> {
      for (;;) {
        const record = take();
        if (record !== undefined) return { value: record, done: false };
        if (failure !== null) throw (failure).error;
        if (ended) return { value: undefined, done: true };
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}
