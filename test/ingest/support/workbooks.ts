/**
 * Workbooks for the tests, made at test time: exceljs writes real .xlsx files (as Excel lays them out: shared
 * strings and styles after the sheets), jszip changes what exceljs cannot write (a macro-enabled .xlsm), and the
 * broken ones are made from good ones (cut off, renamed CSV). Nothing here is committed as a binary.
 *
 * The one exception to "real": no tool on these machines writes a password-protected workbook (Excel's encryption
 * puts the package into an OLE2 compound file with an `EncryptionInfo` and an `EncryptedPackage` stream). `encrypted`
 * builds such a container's header and directory entries, which is what the reader looks at; `legacyXls` an OLE2
 * file without them, as an Excel 97-2003 .xls is.
 */
import { createWriteStream } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';

export type Cell = ExcelJS.CellValue;

export interface SheetSpec {
  readonly name: string;
  readonly rows: readonly (readonly Cell[])[];
  /** Number formats by cell ("C2": "dd.mm.yyyy"): dates need one to be dates. */
  readonly formats?: Readonly<Record<string, string>>;
  readonly merges?: readonly string[];
}

/** A workbook with these sheets, in this tab order, written to `dir/name` (dates counted from 1904 when asked). */
export async function workbook(dir: string, name: string, sheets: readonly SheetSpec[], options: { date1904?: boolean } = {}): Promise<string> {
  const wb = new ExcelJS.Workbook();
  if (options.date1904 === true) wb.properties.date1904 = true;
  for (const spec of sheets) {
    const ws = wb.addWorksheet(spec.name);
    for (const row of spec.rows) ws.addRow([...row]);
    for (const [cell, format] of Object.entries(spec.formats ?? {})) ws.getCell(cell).numFmt = format;
    for (const range of spec.merges ?? []) ws.mergeCells(range);
  }
  const path = join(dir, name);
  await wb.xlsx.writeFile(path);
  return path;
}

/** A big sheet, streamed to disk (constant memory while writing): `rows(i)` gives row i (0-based) after the header. */
export async function bigWorkbook(path: string, header: readonly string[], count: number, row: (i: number) => Cell[]): Promise<string> {
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useSharedStrings: true, useStyles: true });
  const ws = wb.addWorksheet('Data');
  ws.addRow([...header]).commit();
  for (let i = 0; i < count; i++) {
    const added = ws.addRow(row(i));
    added.eachCell((cell) => {
      if (cell.value instanceof Date) cell.numFmt = 'dd.mm.yyyy';
    });
    added.commit();
  }
  ws.commit();
  await wb.commit();
  return path;
}

/**
 * `xlsx` with `count` more strings appended to its shared strings table (`text(i)` each; the cells keep theirs),
 * written to `target`. The table is streamed through the deflater, so a zip bomb of gigabytes unpacked is built in
 * constant memory: `() => 'a'` is the attack of issue 27 (110 million strings in 4.5 MB).
 */
export async function withSharedStrings(xlsx: string, target: string, count: number, text: (i: number) => string): Promise<string> {
  const zip = await JSZip.loadAsync(await readFile(xlsx));
  const table = (await zip.file('xl/sharedStrings.xml')?.async('string')) ?? '';
  const end = table.lastIndexOf('</sst>');
  if (end === -1) throw new Error(`${xlsx} has no shared strings table`);
  function* strings(): Generator<string> {
    yield table.slice(0, end);
    let chunk = '';
    for (let i = 0; i < count; i++) {
      chunk += `<si><t>${text(i)}</t></si>`;
      if (chunk.length >= 1 << 16) {
        yield chunk;
        chunk = '';
      }
    }
    yield `${chunk}</sst>`;
  }
  zip.file('xl/sharedStrings.xml', Readable.from(strings()));
  const out = zip.generateNodeStream({ type: 'nodebuffer', streamFiles: true, compression: 'DEFLATE', compressionOptions: { level: 9 } });
  await pipeline(out, createWriteStream(target));
  return target;
}

/** The same workbook as a macro-enabled .xlsm: Excel's content type and a VBA project part (never run). */
export async function asMacroEnabled(xlsx: string, target: string): Promise<string> {
  const zip = await JSZip.loadAsync(await readFile(xlsx));
  const types = (await zip.file('[Content_Types].xml')?.async('string')) ?? '';
  zip.file(
    '[Content_Types].xml',
    types
      .replace('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml', 'application/vnd.ms-excel.sheet.macroEnabled.main+xml')
      .replace('<Default Extension="xml"', '<Default Extension="bin" ContentType="application/vnd.ms-office.vbaProject"/><Default Extension="xml"'),
  );
  zip.file('xl/vbaProject.bin', Buffer.concat([OLE2_SIGNATURE, Buffer.alloc(504)]));
  await writeFile(target, await zip.generateAsync({ type: 'nodebuffer' }));
  return target;
}

/** The same workbook with its first sheet's XML changed by `edit` (markup exceljs does not write), written to `target`. */
export async function withSheetXml(xlsx: string, target: string, edit: (xml: string) => string): Promise<string> {
  const zip = await JSZip.loadAsync(await readFile(xlsx));
  const sheet = 'xl/worksheets/sheet1.xml';
  zip.file(sheet, edit((await zip.file(sheet)?.async('string')) ?? ''));
  await writeFile(target, await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' }));
  return target;
}

/** The first `keep` of the file's bytes: a copy that was cut off. */
export async function truncated(file: string, target: string, keep: number): Promise<string> {
  await writeFile(target, (await readFile(file)).subarray(0, keep));
  return target;
}

const OLE2_SIGNATURE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/** An OLE2 compound file header (512 bytes) followed by a directory sector naming `streams` (UTF-16LE, 128-byte entries). */
function ole2(streams: readonly string[]): Buffer {
  const header = Buffer.alloc(512);
  OLE2_SIGNATURE.copy(header, 0);
  header.writeUInt16LE(0x003e, 24); // minor version
  header.writeUInt16LE(0x0003, 26); // major version 3: 512-byte sectors
  header.writeUInt16LE(0xfffe, 28); // little-endian
  header.writeUInt16LE(9, 30); // sector shift
  header.writeUInt16LE(6, 32); // mini sector shift
  const directory = Buffer.alloc(512);
  ['Root Entry', ...streams].forEach((name, i) => {
    const entry = i * 128;
    const utf16 = Buffer.from(`${name}\u0000`, 'utf16le');
    utf16.copy(directory, entry);
    directory.writeUInt16LE(utf16.length, entry + 64);
    directory.writeUInt8(i === 0 ? 5 : 2, entry + 66); // root storage, then streams
  });
  return Buffer.concat([header, directory]);
}

/** What a password-protected .xlsx is on disk: an OLE2 container with Excel's encryption streams. */
export async function encrypted(target: string): Promise<string> {
  await writeFile(target, ole2(['EncryptionInfo', 'EncryptedPackage']));
  return target;
}

/** What an Excel 97-2003 workbook is on disk: an OLE2 container with a Workbook stream. */
export async function legacyXls(target: string): Promise<string> {
  await writeFile(target, ole2(['Workbook', '\u0005SummaryInformation']));
  return target;
}
