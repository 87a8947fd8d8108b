/**
 * UTF-8 helpers for the chunk decoder. Validation itself is `buffer.isUtf8` (native, WHATWG rules); these
 * functions only run at chunk ends (a sequence split between two reads) and on the error path (which byte).
 */

/** Length of the sequence a lead byte starts, or 0 when the byte cannot start one. */
function sequenceLength(byte: number): number {
  if (byte < 0x80) return 1;
  if (byte >= 0xc2 && byte <= 0xdf) return 2;
  if (byte >= 0xe0 && byte <= 0xef) return 3;
  if (byte >= 0xf0 && byte <= 0xf4) return 4;
  return 0;
}

/**
 * How many bytes at the end of `bytes` are the start of a sequence that continues in the next chunk. Only a
 * valid lead byte counts; anything else is left in place for validation to refuse.
 */
export function incompleteTailLength(bytes: Uint8Array): number {
  const end = bytes.length;
  for (let back = 1; back <= 3 && back <= end; back++) {
    const byte = bytes[end - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: keep looking for its lead
    const needed = sequenceLength(byte);
    return needed > back ? back : 0;
  }
  return 0;
}

/**
 * Index of the first ill-formed sequence in `bytes` (its lead byte; overlong forms, surrogates, code points
 * above U+10FFFF and truncated sequences included), or -1 when the bytes are valid UTF-8.
 */
export function findInvalidUtf8(bytes: Uint8Array): number {
  const end = bytes.length;
  let i = 0;
  while (i < end) {
    const lead = bytes[i] ?? 0;
    if (lead < 0x80) {
      i++;
      continue;
    }
    const length = sequenceLength(lead);
    if (length === 0) return i;
    // The second byte's allowed range excludes overlong forms (E0, F0), surrogates (ED) and > U+10FFFF (F4).
    let low = 0x80;
    let high = 0xbf;
    if (lead === 0xe0) low = 0xa0;
    else if (lead === 0xed) high = 0x9f;
    else if (lead === 0xf0) low = 0x90;
    else if (lead === 0xf4) high = 0x8f;
    for (let k = 1; k < length; k++) {
      const byte = bytes[i + k];
      if (byte === undefined) return i; // truncated at the end
      const [min, max] = k === 1 ? [low, high] : [0x80, 0xbf];
      if (byte < min || byte > max) return i; // the ill-formed sequence starts at its lead byte
    }
    i += length;
  }
  return -1;
}
