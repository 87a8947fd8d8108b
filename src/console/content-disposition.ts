/**
 * The Content-Disposition of a console download. A header value may hold only visible ASCII, space and tab: Node
 * refuses anything else (ERR_INVALID_CHAR), so a file named `Preise-€.csv` or with a control character in its name
 * answered 500. The name goes out twice (RFC 6266):
 *
 * - `filename="..."`: an ASCII stand-in for old clients, each character that is not printable ASCII (or is `"` or
 *   `\`, which would need quoting rules clients disagree on, or `%`, which some decode) replaced by `_`;
 * - `filename*=UTF-8''...`: the exact name, percent-encoded as RFC 5987 says: every byte that is not an attr-char
 *   (letters, digits and `!#$&+-.^_`|~`). encodeURIComponent leaves `'()*` as they are, which attr-char does not
 *   allow, so they are encoded here too. Browsers that know `filename*` (all current ones) use it.
 */

/** RFC 5987 attr-char: what may stand unencoded in an ext-value. */
const ATTR_CHAR = /^[A-Za-z0-9!#$&+\-.^_`|~]$/;

/** `name` as an RFC 5987 ext-value in UTF-8 (without the `UTF-8''` prefix). */
export function rfc5987Value(name: string): string {
  let out = '';
  for (const byte of Buffer.from(name.toWellFormed(), 'utf8')) {
    const char = String.fromCharCode(byte);
    out += ATTR_CHAR.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** `name` with every character outside printable ASCII, and `"`, `\` and `%`, replaced by `_`. */
export function asciiFileName(name: string): string {
  return name.replace(/[^\x20-\x7e]|["\\%]/gu, '_');
}

/** `attachment` with the ASCII stand-in and the exact name. */
export function attachmentDisposition(name: string): string {
  return `attachment; filename="${asciiFileName(name)}"; filename*=UTF-8''${rfc5987Value(name)}`;
}
