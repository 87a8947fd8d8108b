/**
 * File names the agent makes from the names people drop: a name may be as long as the file system allows, and the
 * agent adds to it (`<id>-` in processing/, `.report.json` next to the archived file, a temporary name).
 */
import { extname } from 'node:path';

/** The longest file name most file systems take, in bytes (NAME_MAX: ext4, XFS, Btrfs; 255 UTF-16 units on SMB). */
const NAME_MAX = 255;

/**
 * `name`, with its stem cut (its extension kept, `~` marking the cut) so that `reserve` more bytes still make a legal
 * name; the name itself when it fits. A file named up to the limit in an inbox would otherwise fail every move and
 * write the agent adds to (`<id>-` in processing/, `.report.json` in archive/, a temporary name), and wait forever
 * in processing/ in front of the source's other files. The ledger and the report keep the name as it was dropped.
 */
export function fittedName(name: string, reserve: number): string {
  const room = NAME_MAX - reserve;
  if (Buffer.byteLength(name) <= room) return name;
  const ext = extname(name).length <= 16 ? extname(name) : '';
  const stem = Buffer.from(name.slice(0, name.length - ext.length));
  // Cut at a character's first byte, never inside one (a UTF-8 continuation byte is 10xxxxxx).
  let end = Math.max(0, room - Buffer.byteLength(ext) - 1);
  while (end > 0 && ((stem[end] ?? 0) & 0xc0) === 0x80) end--;
  return `${stem.subarray(0, end).toString()}~${ext}`;
}
