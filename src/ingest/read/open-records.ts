/**
 * Which record source reads a file (record-source.ts): the source's format decides, CSV (csv-records.ts) or a
 * workbook (xlsx-records.ts: the sheet `sheet:` names, numbers with the source's decimal separator), except that a
 * `.csv` file is CSV in any source: the rejects CSV of a workbook, corrected and dropped back (fix-records.ts).
 * Everything after it (header, mapping, rejects) is the same for both.
 */
import type { Clock } from '../../clock.ts';
import type { CompiledSource } from './compile-source.ts';
import { openCsvRecords } from './csv-records.ts';
import type { ByteRange } from './open-source.ts';
import type { RecordSource } from './record-source.ts';

export interface OpenRecordsInit {
  /** CSV read chunk size in bytes (default 64 KiB); tests use small ones. */
  readonly highWaterMark?: number | undefined;
  /** The clock a workbook's stall timeout runs on. */
  readonly clock?: Clock | undefined;
  /** CSV: read only these bytes of the file (open-source.ts); a workbook cannot be read in parts. */
  readonly byteRanges?: readonly ByteRange[] | undefined;
}

export async function openRecords(file: string, compiled: CompiledSource, init: OpenRecordsInit = {}): Promise<RecordSource> {
  if (isWorkbook(file, compiled)) {
    if (init.byteRanges !== undefined) throw new Error('a workbook cannot be read in byte ranges');
    // Loaded when a workbook is read (the workbook library takes a fifth of a second to load, in every thread that
    // reads CSV too: delta push's second half, two-halves.ts).
    const { openXlsxRecords } = await import('./xlsx-records.ts');
    return openXlsxRecords(file, {
      sheet: compiled.sheet,
      decimalSeparator: compiled.decimalSeparator,
      limits: compiled.workbookLimits,
      ...(init.clock ? { clock: init.clock } : {}),
    });
  }
  return openCsvRecords(file, compiled, init.highWaterMark, init.byteRanges);
}

/** The file is read as a workbook, not as CSV. */
export function isWorkbook(file: string, compiled: CompiledSource): boolean {
  return compiled.format === 'xlsx' && !/\.csv$/i.test(file);
}
