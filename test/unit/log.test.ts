import { describe, expect, it } from 'vitest';
import { createLogger, redactSecrets, registerSecret, REDACTED } from '../../src/log.ts';
import type { LogLevel } from '../../src/log.ts';

/** A destination that keeps every line pino writes. */
function capture() {
  const lines: string[] = [];
  return {
    lines,
    stream: { write: (line: string) => void lines.push(line) },
    text: () => lines.join(''),
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

function logger(level: LogLevel = 'trace', pretty = false) {
  const out = capture();
  return { out, log: createLogger({ level, pretty, destination: out.stream }) };
}

const KEY = 'svc_live_LogTestKey0123456789abcdef';
registerSecret(KEY);

describe('createLogger', () => {
  it('writes JSON lines with a level label, an ISO time and the bound fields', () => {
    const { out, log } = logger('info');
    log.child({ file: 'products.csv' }).info({ rows_ok: 3 }, 'file done');
    log.debug('not shown at info');
    const [record] = out.records();
    expect(out.lines).toHaveLength(1);
    expect(record).toMatchObject({ level: 'info', msg: 'file done', file: 'products.csv', rows_ok: 3 });
    expect(String(record?.['time'])).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('censors the fields where a key is expected, in every spelling', () => {
    const { out, log } = logger();
    log.info(
      {
        authorization: 'Bearer a',
        Authorization: 'Bearer b',
        headers: { authorization: 'Bearer c', Authorization: 'Bearer d' },
        req: { headers: { authorization: 'Bearer e' } },
        err: { request: { headers: { Authorization: 'Bearer f' } } },
        api: { key: 'g-secret-value' },
        apiKey: 'h-secret-value',
        client: { apiKey: 'i-secret-value', api_key: 'j-secret-value' },
        key: 'k-secret-value',
      },
      'request',
    );
    const text = out.text();
    for (const secret of ['Bearer', 'secret-value']) expect(text).not.toContain(secret);
    expect(text.split(REDACTED).length - 1).toBe(11);
  });

  it('never writes a registered key: header objects, error messages, nested values, messages', () => {
    const { out, log } = logger();
    log.info({ request: { method: 'GET', headers: { 'x-api-key': KEY, Cookie: `k=${KEY}` } } }, 'sending');
    log.error({ err: new Error(`401 for Bearer ${KEY}`) }, 'verify failed');
    log.warn({ detail: [{ deep: { deeper: { value: `prefix ${KEY} suffix` } } }] }, 'nested');
    log.info(`message quoting ${KEY} twice ${KEY}`);
    log.info({ url: `https://api.example.com/v1?key=${encodeURIComponent(KEY)}` }, 'url');
    log.error(new TypeError(`thrown with ${KEY}`));
    const text = out.text();
    expect(out.lines).toHaveLength(6);
    expect(text).not.toContain(KEY);
    expect(text).toContain(REDACTED);
    // The rest of each line is intact.
    expect(out.records()[1]).toMatchObject({ msg: 'verify failed', err: { message: `401 for Bearer ${REDACTED}` } });
  });

  it('also replaces the JSON-escaped form of a secret', () => {
    const odd = 'pa"ss\\word-42';
    registerSecret(odd);
    const { out, log } = logger();
    log.info({ proxy_password: odd }, `with ${odd}`);
    expect(out.text()).not.toContain(JSON.stringify(odd).slice(1, -1));
    expect(out.records()[0]).toMatchObject({ proxy_password: REDACTED, msg: `with ${REDACTED}` });
  });

  it('covers loggers created before the secret was registered', () => {
    const { out, log } = logger();
    const late = 'svc_live_RegisteredLater987654321';
    log.info(`before ${late}`);
    registerSecret(late);
    log.info(`after ${late}`);
    expect(out.lines[0]).toContain(late);
    expect(out.lines[1]).not.toContain(late);
  });

  it('ignores secrets too short to replace safely', () => {
    registerSecret('abc');
    expect(redactSecrets('abc abc')).toBe('abc abc');
  });

  it('pretty output goes through the same filter, synchronously', () => {
    const { out, log } = logger('info', true);
    log.info({ headers: { authorization: `Bearer ${KEY}` }, file: 'a.csv' }, `pretty ${KEY}`);
    const text = out.text();
    expect(text).toContain('pretty');
    expect(text).toContain('a.csv');
    expect(text).not.toContain(KEY);
    expect(() => JSON.parse(text) as unknown).toThrow();
  });
});

describe('redactSecrets', () => {
  it('replaces every occurrence of every registered secret', () => {
    expect(redactSecrets(`a ${KEY} b ${KEY}`)).toBe(`a ${REDACTED} b ${REDACTED}`);
    expect(redactSecrets('nothing secret here')).toBe('nothing secret here');
  });
});
