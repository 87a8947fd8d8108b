/**
 * Which record source reads a file (record-source.ts): the source's format decides, CSV (csv-records.ts) or a
 * workbook (xlsx-records.ts: the sheet `sheet:` names, numbers with the source's decimal separator), except that a
 * `.csv` file is CSV in any source: the rejects CSV of a workbook, corrected and dropped back (fix-records.ts).
 * Everything after it (header, mapping, rejects) is the same for both.
 */
import type { Clock } from '../../clock.ts';
import type { CompiledSource } from './compile-source.ts';
import { openCsvRecords } from './csv-records.ts';
import type { RecordSource } from './record-source.ts';
import { openXlsxRecords } from './xlsx-records.ts';

export interface OpenRecordsInit {
  /** CSV read chunk size in bytes (default 64 KiB); tests use small ones. */
  readonly highWaterMark?: number | undefined;
  /** The clock a workbook's stall timeout runs on. */
  readonly clock?: Clock | undefined;
}

export async function openRecords(file: string, compiled: CompiledSource, init: OpenRecordsInit = {}): Promise<RecordSource> {
  if (compiled.format === 'xlsx' && !/\.csv$/i.test(file)) {
    return openXlsxRecords(file, { sheet: compiled.sheet, decimalSeparator: compiled.decimalSeparator, ...(init.clock ? { clock: init.clock } : {}) });
  }
  return openCsvRecords(file, compiled, init.highWaterMark);
}
