/**
 * Reading source files: `readRows(file, options)` yields one outcome per row (a validated API record or a
 * reject), in constant memory; `compileSource` checks a source's mapping once at start-up.
 */
export { readRows } from './reader.ts';
export type { ReadInit, RowConversion, RowReader } from './reader.ts';
export { compileSource, entityReadOptions } from './compile-source.ts';
export type { CompiledSource, ReadOptions } from './compile-source.ts';
export { FILE_FORMAT_CODES, FileFormatError, SourceConfigError } from './errors.ts';
export type { FileFormatCode } from './errors.ts';
export { ENTITY_FIELDS, WRITE_SCHEMAS } from './field-kinds.ts';
export type { EntityRecord, FieldInfo, FieldKind, RecordOf } from './field-kinds.ts';
export type { DetectedDelimiter } from './delimiter.ts';
export type {
  HeaderInfo,
  ReadProgress,
  ReadSummary,
  RowAccepted,
  RowError,
  RowOutcome,
  RowRejected,
  RowsUnread,
} from './types.ts';
