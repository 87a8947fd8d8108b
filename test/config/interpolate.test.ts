import { describe, expect, it } from 'vitest';
import { interpolateString } from '../../src/config/interpolate.ts';
import { API, load, loadError } from './support.ts';

describe('interpolateString', () => {
  const env = { HOST: 'api.example.com', EMPTY: '', PORT: '8443' };

  it.each([
    ['https://${HOST}:${PORT}', 'https://api.example.com:8443'],
    ['${MISSING:-fallback}', 'fallback'],
    ['${EMPTY:-fallback}', 'fallback'],
    ['${HOST:-fallback}', 'api.example.com'],
    ['${MISSING:-}', ''],
    ['${EMPTY}', ''],
    ['$${HOST}', '${HOST}'],
    ['cost $5 and $${literal} and ${PORT}', 'cost $5 and ${literal} and 8443'],
    ['no references', 'no references'],
  ])('%s -> %s', (text, expected) => {
    expect(interpolateString(text, env)).toMatchObject({ ok: true, value: expected });
  });

  it('names an unset variable', () => {
    const result = interpolateString('x ${NOT_SET} y', env);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toContain('environment variable NOT_SET is not set');
  });

  it.each(['${', '${HOST', '${}', '${1ABC}', '${A B}', '${HOST:default}'])('refuses the malformed %s', (text) => {
    expect(interpolateString(text, env).ok).toBe(false);
  });
});

describe('interpolation in the config file', () => {
  it('substitutes set variables and defaults, and keeps quoted values as text', async () => {
    const config = await load(
      [
        'api:',
        '  base_url: https://${API_HOST}/${API_PREFIX:-pricing}',
        '  key: ${PRICING_API_KEY}',
        '  timeout_ms: ${TIMEOUT_MS:-45000}',
        'log:',
        '  level: ${LOG_LEVEL:-warn}',
        '  pretty: ${LOG_PRETTY:-false}',
        'state:',
        '  dir: "/var/lib/$${literal}"',
      ].join('\n'),
      { API_HOST: 'api.example.com' },
    );
    expect(config.api.base_url).toBe('https://api.example.com/pricing');
    expect(config.api.timeout_ms).toBe(45000);
    expect(config.log).toEqual({ level: 'warn', pretty: false });
    expect(config.state.dir).toBe('/var/lib/${literal}');
  });

  it('turns a number from the environment into a number only in a plain scalar', async () => {
    const plain = await load(`${API}  max_connections: \${CONNS}\n`, { CONNS: '8' });
    expect(plain.api.max_connections).toBe(8);
    const error = await loadError(`${API}  max_connections: "\${CONNS}"\n`, { CONNS: '8' });
    expect(error.message).toContain('api.max_connections: expected a number, got text (line 4)');
  });

  it('never lets a value from the environment change the YAML structure', async () => {
    const config = await load(`${API}state:\n  dir: \${DIR}\n`, { DIR: '/tmp/x\nlog:\n  level: trace' });
    expect(config.state.dir).toBe('/tmp/x\nlog:\n  level: trace');
    expect(config.log.level).toBe('info');
  });

  it('an unset variable without default is an error naming it, its YAML path and line', async () => {
    const error = await loadError(`${API}state:\n  dir: \${STATE_DIR}\n`);
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.problems).toEqual([
      expect.objectContaining({ path: 'state.dir', line: 5, message: expect.stringContaining('STATE_DIR') as string }),
    ]);
    expect(error.message).toContain('state.dir: environment variable STATE_DIR is not set');
    expect(error.message).toContain('(line 5)');
  });

  it('reports every unset variable at once, and ignores references in comments', async () => {
    const error = await loadError(
      ['# ${IN_A_COMMENT}', 'api:', '  base_url: ${BASE_URL}', '  key: ${NO_KEY}'].join('\n'),
      { PRICING_API_KEY: undefined },
    );
    expect(error.problems.map((p) => [p.path, p.line])).toEqual([
      ['api.base_url', 3],
      ['api.key', 4],
    ]);
    expect(error.message).not.toContain('IN_A_COMMENT');
  });

  it('interpolates inside lists (quoted in a [flow] list, where { is an indicator)', async () => {
    const env = { INTERNAL: 'erp.local' };
    const block = await load(`${API}  no_proxy:\n    - \${INTERNAL}\n    - .corp\n`, env);
    expect(block.api.no_proxy).toEqual(['erp.local', '.corp']);
    const flow = await load(`${API}  no_proxy: ["\${INTERNAL}", .corp]\n`, env);
    expect(flow.api.no_proxy).toEqual(['erp.local', '.corp']);
  });
});
