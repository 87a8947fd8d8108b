/**
 * The agent's logger: pino JSON lines on stdout (journald and Docker collect them), human-readable output only
 * when asked (`log.pretty`).
 *
 * The API key must never appear in a log line. Two layers make sure of it:
 * 1. pino `redact` paths censor the fields where a secret is expected (authorization headers, api keys). pino
 *    paths are case-sensitive and `*` matches exactly one level, so every variant is listed.
 * 2. A last line of defence for everything else (an error message quoting a header, a URL with credentials, a
 *    nested object no path foresaw): every logger writes through a filter that replaces each string given to
 *    `registerSecret` with `[REDACTED]` in the serialised line, before it reaches the destination.
 *
 * Log fields are stable snake_case keys (`file`, `entity`, `batch`, `rows_ok`, `error`); nothing is routed to
 * the console.
 */
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { isatty } from 'node:tty';
import { pino } from 'pino';
import type { DestinationStream, LoggerOptions as PinoOptions } from 'pino';
import type { PrettyOptions } from 'pino-pretty';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type Logger = pino.Logger;

/** Where log lines go: a file descriptor (1 = stdout, 2 = stderr) or any stream with `write(line)`. */
export type LogDestination = number | DestinationStream;

export interface LoggerOptions {
  readonly level: LogLevel;
  /** Human-readable output through pino-pretty (development). Default false: JSON lines. */
  readonly pretty?: boolean;
  /** Default: stdout (fd 1). */
  readonly destination?: LogDestination;
}

export const REDACTED = '[REDACTED]';

/**
 * Field paths censored by pino. `*` is one level only, hence the repetition for nested headers
 * (`err.request.headers.authorization`) and configs (`config.api.key`).
 */
export const REDACT_PATHS: readonly string[] = [
  'authorization',
  'Authorization',
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  'headers.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
  '*.*.headers.authorization',
  '*.*.headers.Authorization',
  'req.headers.authorization',
  'req.headers.Authorization',
  'request.headers.authorization',
  'request.headers.Authorization',
  'key',
  'apiKey',
  'api_key',
  'apikey',
  '*.key',
  '*.apiKey',
  '*.api_key',
  '*.apikey',
  'api.key',
  '*.api.key',
  'token',
  '*.token',
  'password',
  '*.password',
];

/**
 * How a secret is found in text depends on its length (issue 27 point 13: a short database password was skipped):
 *
 * - 6 characters or more: everywhere, as a plain substring.
 * - 4 or 5 (below SHORT_SECRET_LENGTH): wherever it stands on its own, not touching a letter or digit on either side
 *   ("pw12" in "password pw12 refused", "user:pw12@host", "pw12,"), but not inside a longer word ("pw123",
 *   "apw12"): replaced as a substring, a short secret would cut words of ordinary lines apart.
 * - 1 to 3 (below TINY_SECRET_LENGTH): only where text announces a secret: after `password`, `passwd`, `pwd`, `secret`,
 *   `token` or `key` and `=` or `:` (quotes and JSON escapes allowed), and as a URL's password (`//user:ab@`).
 *   Decided, not overlooked: replaced everywhere, a secret of one to three characters would turn every "a", "1" or
 *   "de" of every line into [REDACTED], making logs unreadable and pointing at the secret (each [REDACTED] inside a
 *   known word spells it out); and a secret that short is found by trying a million guesses, which no redaction
 *   prevents. Such a password should be changed; here it is hidden where it is given as one.
 */
const SHORT_SECRET_LENGTH = 6;
const TINY_SECRET_LENGTH = 4;

/** Registered secrets of SHORT_SECRET_LENGTH or more, longest first (so a secret containing another is replaced whole). Process-wide. */
let secrets: string[] = [];
/** Shorter secrets, as the patterns that find them (above); group 1 is the text kept before the secret. */
let shortPatterns: RegExp[] = [];
const shortSecrets = new Set<string>();

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A letter or digit: what a short secret standing on its own does not touch. */
const WORD_CHAR = '[\\p{L}\\p{N}]';
/** Text that announces a secret: `password=`, `"token": "`, `key: `, a URL's `//user:`. */
const ANNOUNCED = '((?i:pass(?:word)?|passwd|pwd|secret|token|key)\\\\?"?\\s*[:=]\\s*\\\\?"?|//[^\\s/:@]*:)';

function shortSecretPattern(form: string, length: number): RegExp {
  const secret = `${escapeRegExp(form)}(?!${WORD_CHAR})`;
  return length >= TINY_SECRET_LENGTH ? new RegExp(`()(?<!${WORD_CHAR})${secret}`, 'gu') : new RegExp(`${ANNOUNCED}${secret}`, 'gu');
}

/**
 * Makes every logger of this process (already created or not) replace `value` with `[REDACTED]` in its output.
 * Also covers the JSON-escaped form of the value, as it appears inside a serialised string. Call it as soon as
 * a secret is known (the config loader registers the API key and any proxy password).
 */
export function registerSecret(value: string): void {
  if (value === '') return;
  const forms = [value, JSON.stringify(value).slice(1, -1)];
  if (value.length < SHORT_SECRET_LENGTH) {
    for (const form of forms) {
      if (shortSecrets.has(form)) continue;
      shortSecrets.add(form);
      shortPatterns = [...shortPatterns, shortSecretPattern(form, value.length)];
    }
    return;
  }
  const next = new Set(secrets);
  for (const form of forms) next.add(form);
  secrets = [...next].sort((a, b) => b.length - a.length);
}

/**
 * Returns `text` with every registered secret replaced by `[REDACTED]`. For anything that leaves the process
 * outside the logger as well: CLI error messages, reports, error files.
 */
export function redactSecrets(text: string): string {
  let out = text;
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
  }
  for (const pattern of shortPatterns) out = out.replace(pattern, (_match, kept: string) => `${kept}${REDACTED}`);
  return out;
}

/**
 * Wraps a destination so every line pino writes passes through `redactSecrets` first. pino writes one complete
 * serialised line per `write` call, so a secret is never split across two calls.
 */
function secretFilter(inner: DestinationStream): DestinationStream {
  const flushable = inner as DestinationStream & { flush?: (cb: (err?: Error) => void) => void };
  const wrapper = {
    write(line: string): void {
      inner.write(redactSecrets(line));
    },
    flush(cb: (err?: Error) => void): void {
      if (typeof flushable.flush === 'function') flushable.flush(cb);
      else cb();
    },
  };
  return wrapper;
}

type PrettyFactory = (options: PrettyOptions) => DestinationStream;

/**
 * pino-pretty is a development dependency: a production install (`npm ci --omit=dev`) does not have it. It is
 * loaded on demand; without it, `pretty` falls back to JSON (and says so once).
 */
function loadPretty(): PrettyFactory | undefined {
  try {
    const required = createRequire(import.meta.url)('pino-pretty') as PrettyFactory | { default: PrettyFactory };
    return typeof required === 'function' ? required : required.default;
  } catch {
    return undefined;
  }
}

/** pino-pretty pipes into its destination, which must then be a real stream, not just `{ write }`. */
function asNodeStream(destination: DestinationStream): DestinationStream {
  if (destination instanceof Writable) return destination;
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      destination.write(chunk.toString());
      callback();
    },
  });
}

function baseDestination(destination: LogDestination | undefined): DestinationStream {
  if (destination === undefined || typeof destination === 'number') {
    // Synchronous writes: a CLI that exits right after logging, or a daemon killed after `fatal`, loses nothing.
    return pino.destination({ dest: destination ?? 1, sync: true });
  }
  return destination;
}

/**
 * Creates a logger. JSON lines: `level` as a label ("info"), `time` as ISO 8601, `msg`, plus the bound fields.
 * Errors go under `err` (or `error`) and are serialised with message, type and stack.
 */
export function createLogger(options: LoggerOptions): Logger {
  const pinoOptions: PinoOptions = {
    level: options.level,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
  };
  let target = baseDestination(options.destination);
  let prettyMissing = false;
  if (options.pretty === true) {
    const pretty = loadPretty();
    if (pretty === undefined) {
      prettyMissing = true;
    } else {
      // pino-pretty runs in-process on the already filtered JSON line (not as a worker-thread transport), so
      // the secret filter sits in front of it and writes stay synchronous and in order.
      const fd = options.destination ?? 1;
      const colorize = typeof fd === 'number' && isatty(fd);
      target = pretty({ destination: asNodeStream(target), sync: true, colorize, translateTime: 'SYS:standard' });
    }
  }
  const logger = pino(pinoOptions, secretFilter(target));
  if (prettyMissing) logger.warn('log.pretty is set but pino-pretty is not installed; logging JSON');
  return logger;
}
