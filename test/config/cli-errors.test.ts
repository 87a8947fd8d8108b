/** src/cli/commands/errors.ts: every command reports errors the same way. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ReleaseRefusedError } from '../../src/ingest/operations/release.ts';
import { PushFileMissingError } from '../../src/ingest/operations/push-target.ts';
import { describeError, exitCodeOfError, runCommand } from '../../src/cli/commands/errors.ts';
import { EXIT_CONFIG, EXIT_FAILURE } from '../../src/cli/commands/exit-codes.ts';
import { ConfigError } from '../../src/config/index.ts';
import { registerSecret } from '../../src/log.ts';

let written: string[] = [];

beforeEach(() => {
  written = [];
  process.exitCode = undefined;
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  process.exitCode = undefined;
});

describe('runCommand', () => {
  it('leaves a successful action alone, or takes the exit code it returns', async () => {
    await runCommand(() => undefined)();
    expect(process.exitCode).toBeUndefined();
    await runCommand(() => Promise.resolve(3))();
    expect(process.exitCode).toBe(3);
    expect(written).toEqual([]);
  });

  it('a ConfigError: its message and exit code 2', async () => {
    const error = new ConfigError('/etc/agent.yaml', [{ path: 'api.key', message: 'bad', line: 3 }]);
    await runCommand(() => Promise.reject(error))();
    expect(process.exitCode).toBe(EXIT_CONFIG);
    expect(written).toEqual(['Config file /etc/agent.yaml has 1 problem:\n  api.key: bad (line 3)\n']);
  });

  it('any other error: its message only, exit code 1', async () => {
    await runCommand((name: string) => {
      throw new Error(`cannot reach ${name}`);
    })('api.example.com');
    expect(process.exitCode).toBe(EXIT_FAILURE);
    expect(written).toEqual(['cannot reach api.example.com\n']);
  });

  it('gives a usage mistake exit code 2', async () => {
    await runCommand(() => Promise.reject(new PushFileMissingError('x.csv: no such file')))();
    expect(process.exitCode).toBe(EXIT_CONFIG);
    expect(written.join('')).toBe('x.csv: no such file\n');
  });

  it('shows the stack and causes only with PRICING_AGENT_DEBUG=1', async () => {
    vi.stubEnv('PRICING_AGENT_DEBUG', '1');
    await runCommand(() => Promise.reject(new Error('outer', { cause: new Error('inner') })))();
    const text = written.join('');
    expect(text).toMatch(/^outer\nError: outer\n\s+at /);
    expect(text).toContain('caused by: Error: inner');
  });

  it('never prints a registered secret', async () => {
    const secret = 'svc_live_NeverPrintedInErrors000';
    registerSecret(secret);
    vi.stubEnv('PRICING_AGENT_DEBUG', '1');
    await runCommand(() => Promise.reject(new Error(`401 with ${secret}`)))();
    expect(written.join('')).not.toContain(secret);
  });
});

describe('describeError and exitCodeOfError', () => {
  it('handle values that are not errors', () => {
    expect(describeError('plain text')).toBe('plain text');
    expect(describeError(new TypeError(''))).toBe('TypeError');
    expect(exitCodeOfError('x')).toBe(EXIT_FAILURE);
    expect(exitCodeOfError(null)).toBe(EXIT_FAILURE);
  });

  it('give a usage mistake of any room exit code 2, and an error that names an exit code of its own nothing special', () => {
    expect(exitCodeOfError(new PushFileMissingError('x.csv: no such file'))).toBe(EXIT_CONFIG);
    expect(exitCodeOfError(new ReleaseRefusedError('RELEASE_UNKNOWN', 'no held file named "x"'))).toBe(EXIT_CONFIG);
    expect(exitCodeOfError(Object.assign(new Error('boom'), { exitCode: 4 }))).toBe(EXIT_FAILURE);
  });
});
