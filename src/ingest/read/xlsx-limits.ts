/**
 * Bounds on what one workbook may make the reader unpack, hold and walk (issue 27 point 4). A .xlsx is a zip of XML:
 * 4.5 MB of it held 110 million tiny shared strings (1.7 GB unpacked), which exceljs keeps in memory as one table,
 * and the heap ran out after minutes; the file stayed in processing/ and crashed the agent again at every start.
 * Each bound is counted as the parts are inflated and parsed, so a file fails before the memory is spent, with
 * WORKBOOK_TOO_LARGE and a sentence naming the key that would let it through (`workbook_limits.*` of its source):
 *
 * - unpacked bytes: all the parts read (relationships, workbook, shared strings, styles, the sheet), as inflated,
 *   whatever the archive's directory claims; a part the directory already declares too large fails before a byte
 *   of it is inflated.
 * - compression ratio: inflated bytes of a part over its compressed bytes, checked once a part has inflated past
 *   RATIO_GRACE_BYTES (small parts have large ratios legitimately). Apache POI's zip-bomb guard uses the same two
 *   numbers (ZipSecureFile: ratio 100, grace 100 KiB). Spreadsheet XML deflates 2-15 times (a sheet of the same
 *   values in every row: 13), a bomb hundreds or thousands of times.
 * - shared strings: the number of strings, and the bytes of xl/sharedStrings.xml: the table exceljs holds whole
 *   while the sheet is read (any cell may refer to any string), so these two bound the reader's memory.
 * - cells: the sheet's cells as wide as each row claims (a gap before a far column counts, as it is walked); this
 *   bounds the time a file holds its source.
 */
import { Transform, type Readable } from 'node:stream';
import type { WorkbookLimits } from '../../config/workbook-limits-schema.ts';
import { FileFormatError } from './errors.ts';

/** Below this many inflated bytes a part's ratio is not checked (Apache POI's grace size). */
export const RATIO_GRACE_BYTES = 100 * 1024; // 100 KiB

const SHARED_STRINGS_PART = 'xl/sharedStrings.xml';

/** What a part needs to be guarded: its path and what the archive's directory says of its sizes. */
export interface GuardedPart {
  readonly path: string;
  readonly uncompressedSize: number;
  /** Unknown for parts a test hands over without an archive: no ratio check then. */
  readonly compressedSize?: number | undefined;
}

/** One workbook's running counts against its limits. */
export class WorkbookBudget {
  readonly #limits: WorkbookLimits;
  readonly #file: string;
  #unpacked = 0;
  #sharedStrings = 0;
  #cells = 0;

  constructor(file: string, limits: WorkbookLimits) {
    this.#file = file;
    this.#limits = limits;
  }

  #tooLarge(limit: keyof WorkbookLimits, what: string): FileFormatError {
    return new FileFormatError(
      'WORKBOOK_TOO_LARGE',
      `the workbook is too large to read safely: ${what}, over workbook_limits.${limit} (${this.#limits[limit]}); ` +
        `split it into smaller files, or raise that limit in the source's config if the file is genuine`,
      { file: this.#file },
    );
  }

  /**
   * `stream` (the inflated bytes of `part`) passed through a counter that fails the read as soon as a bound is
   * crossed; throws at once when the directory already declares more than is left.
   */
  guard(part: GuardedPart, stream: Readable): Readable {
    const shared = part.path === SHARED_STRINGS_PART;
    const limits = this.#limits;
    if (this.#unpacked + part.uncompressedSize > limits.max_unpacked_bytes) {
      stream.destroy();
      throw this.#tooLarge('max_unpacked_bytes', `its part ${part.path} unpacks to ${part.uncompressedSize} bytes (${this.#unpacked} read before it)`);
    }
    if (shared && part.uncompressedSize > limits.max_shared_strings_bytes) {
      stream.destroy();
      throw this.#tooLarge('max_shared_strings_bytes', `its shared strings unpack to ${part.uncompressedSize} bytes`);
    }
    let inflated = 0;
    const counter = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        inflated += chunk.length;
        this.#unpacked += chunk.length;
        const compressed = part.compressedSize;
        if (this.#unpacked > limits.max_unpacked_bytes) {
          done(this.#tooLarge('max_unpacked_bytes', `its parts unpack to more than ${limits.max_unpacked_bytes} bytes`));
        } else if (shared && inflated > limits.max_shared_strings_bytes) {
          done(this.#tooLarge('max_shared_strings_bytes', `its shared strings unpack to more than ${limits.max_shared_strings_bytes} bytes`));
        } else if (compressed !== undefined && inflated > RATIO_GRACE_BYTES && inflated > compressed * limits.max_compression_ratio) {
          done(this.#tooLarge('max_compression_ratio', `its part ${part.path} unpacks to more than ${limits.max_compression_ratio} times its ${compressed} compressed bytes (a zip bomb?)`));
        } else done(null, chunk);
      },
    });
    // pipe() does not carry an error of the source on: the parser reading the counter must see it.
    stream.on('error', (error) => counter.destroy(error));
    counter.on('close', () => stream.destroy());
    return stream.pipe(counter);
  }

  /** One more string in the shared strings table. */
  sharedString(): void {
    if (++this.#sharedStrings > this.#limits.max_shared_strings) {
      throw this.#tooLarge('max_shared_strings', `it has more than ${this.#limits.max_shared_strings} shared strings`);
    }
  }

  /** A sheet row `width` cells wide (its last cell's column). */
  cells(width: number): void {
    this.#cells += width;
    if (this.#cells > this.#limits.max_cells) throw this.#tooLarge('max_cells', `its sheet has more than ${this.#limits.max_cells} cells`);
  }
}
