/**
 * Is this file a workbook the reader can open? Decided from its bytes before any parsing, so that each kind of file
 * that is not one gets its own clear reason instead of the zip library's "invalid signature" (or, for a cut-off
 * file, a reader that waits forever: library-notes.md, exceljs):
 *
 * - `PK\x03\x04` ... with an end-of-central-directory record in its last 64 KiB: a zip, read on;
 * - a zip without that record: cut off (an interrupted copy or download);
 * - `D0 CF 11 E0 A1 B1 1A E1` (OLE2): either a password-protected .xlsx (Excel encrypts into an OLE2 container that
 *   holds an `EncryptionInfo` stream) or an old .xls (Excel 97-2003);
 * - anything else: not a workbook; text that looks like CSV is named as such (a CSV file named .xlsx).
 */
import { openInboxFile } from '../inbox-file.ts';
import { FileFormatError } from './errors.ts';

const ZIP_LOCAL_HEADER = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const ZIP_END_OF_DIRECTORY = Buffer.from([0x50, 0x4b, 0x05, 0x06]);
const OLE2 = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
/** The end-of-central-directory record (22 bytes) follows at most a 64 KiB zip comment. */
const TAIL_BYTES = 22 + 65_535;
/** An OLE2 directory near the start names its streams; Excel's encrypted package has EncryptionInfo. */
const OLE2_SCAN_BYTES = 1024 * 1024;
const ENCRYPTION_INFO = Buffer.from('EncryptionInfo', 'utf16le');

async function readAt(file: string, position: number, length: number): Promise<Buffer> {
  const handle = await openInboxFile(file);
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, position);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Text-like bytes (no NUL, mostly printable): what a CSV or other text file starts with. */
function looksLikeText(head: Buffer): boolean {
  if (head.length === 0 || head.includes(0)) return false;
  const text = head.toString('utf8');
  const printable = text.replace(/[^\t\n\r\x20-\x7e\u00a0-\uffff]/g, '');
  return printable.length >= text.length * 0.95;
}

/** Resolves when `file` is a complete zip (a workbook to read); throws a FileFormatError naming what it is instead. */
export async function checkWorkbookFile(file: string, size: number): Promise<void> {
  const head = await readAt(file, 0, 4096);
  if (head.length === 0) throw new FileFormatError('EMPTY_FILE', 'the file is empty (0 bytes)', { file });
  if (head.subarray(0, 4).equals(ZIP_END_OF_DIRECTORY)) throw new FileFormatError('EMPTY_FILE', 'the file is an empty zip archive, not a workbook', { file });
  if (head.subarray(0, 4).equals(ZIP_LOCAL_HEADER)) {
    const tail = await readAt(file, Math.max(0, size - TAIL_BYTES), Math.min(size, TAIL_BYTES));
    if (tail.lastIndexOf(ZIP_END_OF_DIRECTORY) === -1) {
      throw new FileFormatError(
        'WORKBOOK_CORRUPT',
        `the workbook is incomplete: the end of its zip archive is missing (${size} bytes; cut off while it was copied or saved?). Save or copy it again`,
        { file },
      );
    }
    return;
  }
  if (head.subarray(0, 8).equals(OLE2)) {
    const body = await readAt(file, 0, Math.min(size, OLE2_SCAN_BYTES));
    if (body.includes(ENCRYPTION_INFO)) {
      throw new FileFormatError(
        'WORKBOOK_ENCRYPTED',
        'the workbook is protected with a password (encrypted): save it without a password (File > Info > Protect Workbook) and drop it again',
        { file },
      );
    }
    throw new FileFormatError(
      'WORKBOOK_LEGACY_XLS',
      'the file is an old Excel 97-2003 workbook (.xls), not .xlsx: save it as "Excel Workbook (*.xlsx)" and drop it again',
      { file },
    );
  }
  if (looksLikeText(head)) {
    const firstLine = head.toString('utf8').split(/\r?\n/, 1)[0] ?? '';
    const csv = /[,;\t|]/.test(firstLine);
    throw new FileFormatError(
      'NOT_A_WORKBOOK',
      csv
        ? 'the file is text (it looks like CSV), not an Excel workbook: name it .csv, or drop it into a source with format: csv'
        : 'the file is text, not an Excel workbook (.xlsx)',
      { file },
    );
  }
  throw new FileFormatError('NOT_A_WORKBOOK', 'the file is not an Excel workbook (.xlsx): its first bytes are not a zip archive', { file });
}
