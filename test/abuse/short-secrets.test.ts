/**
 * Issue 27 point 13: secrets shorter than six characters (a short PostgreSQL password) were never registered, so
 * the last line of defence (every log line and CLI error passes through redactSecrets) let them through. The
 * decision for short secrets is written in src/log.ts: 4 or 5 characters are hidden wherever they stand on their
 * own, 1 to 3 where the text announces a secret (password=, a URL's password), and ordinary text stays as it was.
 * The database password is registered by the real config loader and a real logger writes the lines.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { createLogger, redactSecrets, REDACTED } from '../../src/log.ts';
import { tempDir, writeConfig } from '../config/support.ts';

/** A logger writing into an array of parsed lines. */
function capture() {
  const lines: string[] = [];
  const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
  return { lines, log };
}

async function loadWithPassword(password: string, asFile: boolean): Promise<void> {
  const dir = tempDir();
  const secret = asFile ? `    password_file: ./pg-password\n` : `    password: "${password}"\n`;
  if (asFile) await writeFile(join(dir, 'pg-password'), `${password}\n`);
  const file = writeConfig(
    `api:\n  base_url: https://api.example.com\n  key: svc_live_ShortSecretTest0000111\nstate:\n  backend: postgres\n  postgres:\n    url: postgres://agent@db.example.com:5432/pricing\n${secret}` +
      `sources:\n  - name: prices\n    entity: product_store\n    path: ./inbox\n`,
    'pricing-agent.yaml',
    dir,
  );
  await loadConfig(file, {}, { logger: createLogger({ level: 'fatal', destination: 2 }) });
}

describe('short secrets in log lines and error messages', () => {
  it('a 5-character database password is hidden wherever it stands on its own', async () => {
    await loadWithPassword('Pg5!x', false);
    const { lines, log } = capture();
    log.error(`connection to postgres://agent:Pg5!x@db.example.com failed (password Pg5!x refused)`);
    log.error({ err: { message: 'auth with "Pg5!x" failed' } }, 'state database unreachable');
    const text = lines.join('');
    expect(text).not.toContain('Pg5!x');
    expect(text).toContain(`postgres://agent:${REDACTED}@db.example.com`);
    expect(text).toContain(`password ${REDACTED} refused`);
    // Inside a longer word it is not this secret: left alone, so ordinary text stays readable.
    expect(redactSecrets('Pg5!xyz and xPg5!x')).toBe('Pg5!xyz and xPg5!x');
    expect(redactSecrets('Pg5!x')).toBe(REDACTED);
  });

  it('a 4-character password from a password_file likewise', async () => {
    await loadWithPassword('4tw1', true);
    expect(redactSecrets('psql: password=4tw1, retrying; 4tw1 again')).toBe(`psql: password=${REDACTED}, retrying; ${REDACTED} again`);
    expect(redactSecrets('item 4tw12 and a4tw1')).toBe('item 4tw12 and a4tw1');
  });

  it('a 2-character password is hidden where a secret is announced, never in ordinary words', async () => {
    await loadWithPassword('de', false);
    const { lines, log } = capture();
    log.error('PGPASSWORD=de psql -c "select 1"; url postgres://agent:de@db.example.com; {"password": "de"}');
    log.info('file Preise-de.csv done: 12 rows sent to the store de-42, mode bulk');
    const [secretLine = '', ordinary = ''] = lines;
    expect(secretLine).not.toMatch(/PASSWORD=de|agent:de@|\\"password\\": \\"de\\"/);
    expect(secretLine).toContain(`PGPASSWORD=${REDACTED}`);
    expect(secretLine).toContain(`postgres://agent:${REDACTED}@db.example.com`);
    expect(secretLine).toContain(`\\"password\\": \\"${REDACTED}\\"`);
    expect(ordinary).toContain('file Preise-de.csv done: 12 rows sent to the store de-42, mode bulk');
    expect(ordinary).not.toContain(REDACTED);
  });
});
