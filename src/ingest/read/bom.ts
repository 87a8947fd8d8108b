/**
 * Byte-order marks at the start of a file, and which encoding a file is then read in.
 *
 * Decision: a BOM wins over the configured encoding. A UTF-16 BOM is unambiguous (no CSV header starts with
 * "ÿþ"), and a UTF-8 BOM on a file declared Windows-1252 is an Excel "CSV UTF-8" export whose header would
 * otherwise start with "ï»¿". Reading such a file in the declared encoding would misread every non-ASCII
 * character, so the BOM's encoding is used and the difference is reported as a warning.
 */
import type { Encoding } from '../../config/source-schema.ts';

export interface BomResult {
  /** The encoding the file is read in. */
  readonly encoding: Encoding;
  /** Bytes of BOM at the start of the file (0 when none); reading starts after them. */
  readonly bomLength: number;
  /** The BOM's encoding, or null when the file has none. */
  readonly bom: 'utf-8' | 'utf-16le' | 'utf-16be' | null;
  /** Set when the BOM overrode the configured encoding. */
  readonly warning?: string;
}

/** Looks at the first bytes of a file (at least 3 when the file has them). */
export function sniffBom(head: Uint8Array, configured: Encoding): BomResult {
  let bom: BomResult['bom'] = null;
  let bomLength = 0;
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) [bom, bomLength] = ['utf-8', 3];
  else if (head[0] === 0xff && head[1] === 0xfe) [bom, bomLength] = ['utf-16le', 2];
  else if (head[0] === 0xfe && head[1] === 0xff) [bom, bomLength] = ['utf-16be', 2];
  if (bom === null) return { encoding: configured, bomLength, bom };
  if (bom === configured) return { encoding: configured, bomLength, bom };
  return {
    encoding: bom,
    bomLength,
    bom,
    warning: `the file starts with a ${bom} byte-order mark; read as ${bom}, not as the configured ${configured}`,
  };
}

/** The byte sequences of U+FEFF that mark a BOM in the middle of a file. */
export const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
