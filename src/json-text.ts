/**
 * JSON.parse of V8 13.6 (Node.js 24) can read an object key written with an escape as another key: once objects
 * with a key holding a backslash were parsed (before, or earlier in the same text), a later object with the same keys
 * before it may get `\` for a key written `"\""`, `"\n"` or `"\ud800"` (nodejs/node#63785, V8 bug 521080746; the
 * sandbox's fuzzed bulk bodies showed it, test/sandbox/parse-json.test.ts; a custom column named `"` came back from a
 * products mirror as `\`, test/regressions/escaped-custom-column-names-misread.test.ts). The sandbox reads request
 * bodies and the client reads response bodies through it. A text whose keys carry no
 * escape is unaffected. `parseJsonText` parses any other text with its escaped keys swapped for plain placeholder
 * keys, and puts the keys back, decoded as JSON string values (which the bug does not touch).
 */

/** Whether `text` (valid JSON: the scan does not check it) has an object key written with an escape sequence. */
export function hasEscapedKey(text: string): boolean {
  if (!text.includes('\\')) return false;
  let found = false;
  scanStrings(text, (start, end, escaped) => {
    if (escaped && isKey(text, end)) found = true;
    return found;
  });
  return found;
}

/** JSON.parse(text), with keys written with escapes read right; throws JSON.parse's error for a text that is not JSON. */
export function parseJsonText(text: string): unknown {
  const value = JSON.parse(text) as unknown;
  if (!hasEscapedKey(text)) return value;
  const prefix = placeholderPrefix(text);
  const keys: string[] = [];
  const parts: string[] = [];
  let from = 0;
  scanStrings(text, (start, end, escaped) => {
    if (escaped && isKey(text, end)) {
      parts.push(text.slice(from, start), `"${prefix}${keys.length}"`);
      keys.push(JSON.parse(text.slice(start, end + 1)) as string);
      from = end + 1;
    }
    return false;
  });
  parts.push(text.slice(from));
  return restoreKeys(JSON.parse(parts.join('')) as unknown, prefix, keys);
}

/** Calls `visit(start, end, escaped)` for every string of `text` (the offsets of its quotes) until it returns true. */
function scanStrings(text: string, visit: (start: number, end: number, escaped: boolean) => boolean): void {
  for (let i = text.indexOf('"'); i >= 0; i = text.indexOf('"', i + 1)) {
    const start = i;
    let escaped = false;
    for (i += 1; i < text.length && text.charCodeAt(i) !== 0x22; i += 1) {
      if (text.charCodeAt(i) === 0x5c) {
        escaped = true;
        i += 1;
      }
    }
    if (visit(start, i, escaped)) return;
  }
}

/** Whether the string ending at `end` is a key: the next character after white space is a colon. */
function isKey(text: string, end: number): boolean {
  let i = end + 1;
  while (text.charCodeAt(i) === 0x20 || text.charCodeAt(i) === 0x0a || text.charCodeAt(i) === 0x0d || text.charCodeAt(i) === 0x09) i += 1;
  return text.charCodeAt(i) === 0x3a;
}

/** A key prefix that occurs nowhere in `text` (private-use characters: no escape needed, never an array index). */
function placeholderPrefix(text: string): string {
  let prefix = '\uE000';
  while (text.includes(prefix)) prefix += '\uE001';
  return prefix;
}

function restoreKeys(value: unknown, prefix: string, keys: readonly string[]): unknown {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) value[i] = restoreKeys(value[i], prefix, keys);
    return value;
  }
  if (value === null || typeof value !== 'object') return value;
  let changed = false;
  const entries = Object.entries(value).map(([key, child]) => {
    const name = key.startsWith(prefix) ? (keys[Number(key.slice(prefix.length))] ?? key) : key;
    const restored = restoreKeys(child, prefix, keys);
    if (name !== key || restored !== child) changed = true;
    return [name, restored] as const;
  });
  // fromEntries defines own properties, as JSON.parse does (a `__proto__` key stays a key); a key met twice keeps
  // its first place and its last value, as in JSON.parse.
  return changed ? Object.fromEntries(entries) : value;
}
