/**
 * The API key: from `api.key` (usually `${PRICING_API_KEY}`) or from `api.key_file` (a file holding only the
 * key, e.g. a systemd credential under `${CREDENTIALS_DIRECTORY}`), never both.
 *
 * Every message here describes the key without quoting it: a wrong key is still somebody's secret, and these
 * messages end up in logs and terminals. The key itself is registered with the logger's secret filter as soon
 * as it is read.
 */
import { readFile, stat } from 'node:fs/promises';
import { API_KEY_PREFIX } from '../api/schemas/limits.ts';
import { registerSecret } from '../log.ts';
import { ConfigError } from './errors.ts';

/** Returns what is wrong with a key, or undefined when it looks usable. Never includes the key. */
export function checkApiKey(key: string): string | undefined {
  if (key === '') return 'the API key is empty';
  // A header value cannot carry whitespace or control characters; they are copy-paste accidents.
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(key)) {
    return 'the API key contains spaces, line breaks or control characters; copy it again';
  }
  if (!key.startsWith(API_KEY_PREFIX)) {
    const hint = key.includes(API_KEY_PREFIX)
      ? `remove what comes before "${API_KEY_PREFIX}"`
      : 'copy the whole key from the web application (settings, integrations, API access card)';
    return `the API key does not start with "${API_KEY_PREFIX}"; ${hint}`;
  }
  return undefined;
}

export type KeyFileResult =
  | {
      readonly ok: true;
      readonly key: string;
      /** Permission bits, when the file is accessible to group or others (mode & 0o077); else undefined. */
      readonly looseMode?: number;
    }
  | { readonly ok: false; readonly message: string };

function describeReadError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return code ?? 'unknown error';
}

export type SecretFileResult =
  | { readonly ok: true; readonly content: string; readonly looseMode?: number }
  | { readonly ok: false; readonly message: string };

/**
 * Reads a file that holds one secret (an API key, a feed token): its content, trimmed (a trailing newline is
 * normal), and its permission bits when group or others can access it. The message of a failure names the file,
 * never its content.
 */
export async function readSecretFile(file: string): Promise<SecretFileResult> {
  let content: string;
  let mode: number;
  try {
    content = await readFile(file, 'utf8');
    mode = (await stat(file)).mode;
  } catch (error) {
    return { ok: false, message: `cannot read ${file} (${describeReadError(error)})` };
  }
  // Windows has no Unix permission bits: stat reports 0o666 for every writable file.
  const loose = process.platform !== 'win32' && (mode & 0o077) !== 0;
  return loose ? { ok: true, content: content.trim(), looseMode: mode & 0o777 } : { ok: true, content: content.trim() };
}

/** Reads a key file: the content, trimmed (a trailing newline is normal), checked like an inline key. */
export async function readKeyFile(file: string): Promise<KeyFileResult> {
  const read = await readSecretFile(file);
  if (!read.ok) return read;
  const key = read.content;
  const problem = checkApiKey(key);
  if (problem !== undefined) return { ok: false, message: `${file}: ${problem}` };
  registerSecret(key);
  return read.looseMode === undefined ? { ok: true, key } : { ok: true, key, looseMode: read.looseMode };
}

/** The warning for a secret file (by default the key file) that group or others can access. */
export function looseModeWarning(file: string, mode: number, what = 'key file'): string {
  const octal = mode.toString(8).padStart(4, '0');
  return `the ${what} ${file} is accessible by group or others (mode ${octal}); run: chmod 600 ${file}`;
}

/**
 * The current API key for a loaded config. With `api.key_file` the file is read again, so a rotated key written
 * to the file is picked up (the daemon calls this after a 401 or on reload); with `api.key` it is the loaded
 * value. A file that became unreadable or holds a bad key is a ConfigError (exit code 2 in the CLI).
 */
export async function readApiKey(api: { readonly key: string; readonly key_file: string | null }): Promise<string> {
  if (api.key_file === null) return api.key;
  const result = await readKeyFile(api.key_file);
  if (!result.ok) {
    const problem = { path: 'api.key_file', message: result.message };
    throw new ConfigError(api.key_file, [problem], `API key file problem: ${result.message}.`);
  }
  return result.key;
}
