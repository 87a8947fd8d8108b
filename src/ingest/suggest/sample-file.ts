/**
 * The first records of a file as the agent's own reader hands them out, for `sources suggest`: the encoding and the
 * delimiter are found first (from the bytes and the first lines), then the file is read through the same record
 * sources a push uses (open-records.ts: CSV or a workbook), so what the draft describes is what a push will read.
 *
 * Encoding: a byte-order mark decides; else UTF-8 when the first 256 KiB are valid UTF-8; else Windows-1252 (the
 * ANSI code page of Western European Excel and most tills; ISO-8859-1 differs from it only in characters such files
 * do not hold). Delimiter: the candidate that splits most of the first lines into the same number of fields, more
 * than one: a letterhead above the header (one field a line) does not mislead it, as it would a header-only count.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import { SourceSchema, type Encoding } from '../../config/source-schema.ts';
import { sniffBom } from '../read/bom.ts';
import { compileSource } from '../read/compile-source.ts';
import { createDecoder } from '../read/decoders.ts';
import { DELIMITER_CANDIDATES, type DetectedDelimiter } from '../read/delimiter.ts';
import { openRecords } from '../read/open-records.ts';

/** How many records the draft looks at; enough for formats and keys, small enough to print at once. */
export const SAMPLE_RECORDS = 2_000;
const HEAD_BYTES = 256 * 1024;

export interface FileSample {
  readonly format: 'csv' | 'xlsx';
  readonly encoding: Encoding;
  readonly encodingWhy: string;
  /** CSV only. */
  readonly delimiter: DetectedDelimiter | null;
  readonly delimiterWhy: string;
  /** Records in file order, with the line each starts on. */
  readonly records: readonly { readonly line: number; readonly fields: readonly string[] }[];
  /** True when the file holds more records than the sample. */
  readonly truncated: boolean;
}

export function isWorkbookName(file: string): boolean {
  return /^\.xls[xm]$/i.test(extname(file));
}

async function sniffEncoding(head: Buffer): Promise<{ encoding: Encoding; why: string }> {
  const bom = sniffBom(head, 'utf-8');
  if (bom.bom !== null) return { encoding: bom.encoding, why: `the file starts with a ${bom.bom} byte-order mark` };
  // A multi-byte character cut at the end of the head is not an error of the file: the end is checked only when the
  // head is the whole file.
  if (await readsAsUtf8([head], head.length < HEAD_BYTES)) {
    return { encoding: 'utf-8', why: head.some((byte) => byte > 0x7f) ? 'the text is valid UTF-8' : 'plain ASCII (UTF-8 reads it)' };
  }
  return { encoding: 'windows-1252', why: 'not valid UTF-8: read as Windows-1252, the ANSI code page of Western European Excel and tills' };
}

/**
 * Whether `chunks` read as UTF-8 with the reader's own decoder (read/decoders.ts), so that a draft says utf-8 only
 * where the push will read the file so; `whole`: they are the whole file (a sequence left open at their end is wrong).
 */
async function readsAsUtf8(chunks: Iterable<Buffer> | AsyncIterable<Buffer>, whole: boolean): Promise<boolean> {
  const decoder = createDecoder('utf-8', 0);
  try {
    for await (const chunk of chunks) decoder.write(chunk);
    if (whole) decoder.end();
    return true;
  } catch {
    return false;
  }
}

/** Fields of a line split by `d`, outside quotes. */
function fieldCount(line: string, d: string): number {
  let count = 1;
  let quoted = false;
  for (const chr of line) {
    if (chr === '"') quoted = !quoted;
    else if (!quoted && chr === d) count += 1;
  }
  return count;
}

function sniffDelimiter(text: string): { delimiter: DetectedDelimiter; why: string } {
  const lines = text.split(/\r\n|\n|\r/).filter((l) => l.trim() !== '').slice(0, 60);
  let best: { d: DetectedDelimiter; lines: number; fields: number } = { d: ',', lines: 0, fields: 1 };
  for (const d of DELIMITER_CANDIDATES) {
    const counts = new Map<number, number>();
    for (const line of lines) {
      const n = fieldCount(line, d);
      if (n > 1) counts.set(n, (counts.get(n) ?? 0) + 1);
    }
    for (const [fields, n] of counts) if (n > best.lines || (n === best.lines && fields > best.fields)) best = { d, lines: n, fields };
  }
  const name = best.d === '\t' ? 'tab' : `"${best.d}"`;
  return { delimiter: best.d, why: best.lines === 0 ? 'no line has two fields: one column' : `${name} splits ${best.lines} of the first ${lines.length} lines into ${best.fields} fields` };
}

export async function sampleFile(file: string): Promise<FileSample> {
  const workbook = isWorkbookName(file);
  let encoding: Encoding = 'utf-8';
  let encodingWhy = 'a workbook stores its text as Unicode';
  let delimiter: DetectedDelimiter | null = null;
  let delimiterWhy = 'a workbook has cells, not a delimiter';
  if (!workbook) {
    const handle = await open(file, 'r');
    let head: Buffer;
    try {
      const buffer = Buffer.alloc(HEAD_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
      head = buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
    ({ encoding, why: encodingWhy } = await sniffEncoding(head));
    // A Windows-1252 file may hold its first é or ü far down (a product list sorted by number): the head alone would
    // draft utf-8, and the whole file would fail at that line. The rest is read through once to be sure.
    if (encoding === 'utf-8' && head.length === HEAD_BYTES && !(await readsAsUtf8(createReadStream(file) as AsyncIterable<Buffer>, true))) {
      encoding = 'windows-1252';
      encodingWhy = 'not valid UTF-8 further down the file: read as Windows-1252, the ANSI code page of Western European Excel and tills';
    }
    const text = new TextDecoder(encoding === 'windows-1252' ? 'windows-1252' : encoding).decode(head);
    ({ delimiter, why: delimiterWhy } = sniffDelimiter(text));
  }
  const options = SourceSchema.parse({
    name: 'suggest',
    entity: 'products',
    path: '.',
    format: workbook ? 'xlsx' : 'csv',
    encoding,
    ...(delimiter !== null ? { delimiter } : {}),
  });
  const records = await openRecords(file, compileSource(options));
  const sample: { line: number; fields: string[] }[] = [];
  let truncated = false;
  try {
    for (;;) {
      const record = await records.next();
      if (record === undefined) break;
      if (sample.length === SAMPLE_RECORDS) {
        truncated = true;
        break;
      }
      sample.push({ line: record.line, fields: [...record.fields] });
    }
  } finally {
    records.close();
  }
  return { format: workbook ? 'xlsx' : 'csv', encoding, encodingWhy, delimiter, delimiterWhy, records: sample, truncated };
}
