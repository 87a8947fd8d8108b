/**
 * `workbook_limits` of a `format: xlsx` source: how much one workbook may make the reader unpack, hold and walk
 * before the file fails with WORKBOOK_TOO_LARGE (src/ingest/read/xlsx-limits.ts says how each is counted). The
 * defaults live here, in one place: Excel's largest sheet, 1,048,576 rows of five columns with a unique text per row
 * (bench:xlsx --full), is about 250 MB of sheet XML, 30 MB of shared strings (1.1 million strings) and 5.2 million
 * cells, well inside each of them, while the 4.5 MB workbook of 110 million shared strings that exhausted the heap
 * fails on its compression ratio within its first megabytes.
 */
import { z } from 'zod';

export const WORKBOOK_LIMIT_DEFAULTS = {
  /** Bytes all the parts read (workbook, shared strings, styles, the sheet) may inflate to. */
  max_unpacked_bytes: 1024 * 1024 * 1024, // bytes: 1 GiB
  /** Inflated bytes per compressed byte of one part, checked past its first 100 KiB (Apache POI's zip-bomb guard). */
  max_compression_ratio: 100, // ratio
  /** Strings in the shared strings table (held in memory while the sheet is read). */
  max_shared_strings: 5_000_000, // strings
  /** Bytes of xl/sharedStrings.xml, inflated (the table's text, held in memory). */
  max_shared_strings_bytes: 256 * 1024 * 1024, // bytes: 256 MiB
  /** Cells of the sheet read, each row as wide as its last cell. */
  max_cells: 50_000_000, // cells
} as const;

export type WorkbookLimits = { readonly [K in keyof typeof WORKBOOK_LIMIT_DEFAULTS]: number };

const positive = (max: number) => z.int().min(1).max(max);

export const workbookLimitsSchema = z
  .strictObject({
    max_unpacked_bytes: positive(Number.MAX_SAFE_INTEGER).default(WORKBOOK_LIMIT_DEFAULTS.max_unpacked_bytes),
    max_compression_ratio: positive(1_000_000).default(WORKBOOK_LIMIT_DEFAULTS.max_compression_ratio),
    max_shared_strings: positive(Number.MAX_SAFE_INTEGER).default(WORKBOOK_LIMIT_DEFAULTS.max_shared_strings),
    max_shared_strings_bytes: positive(Number.MAX_SAFE_INTEGER).default(WORKBOOK_LIMIT_DEFAULTS.max_shared_strings_bytes),
    max_cells: positive(Number.MAX_SAFE_INTEGER).default(WORKBOOK_LIMIT_DEFAULTS.max_cells),
  })
  .prefault({});
