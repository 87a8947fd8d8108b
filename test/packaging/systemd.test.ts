/**
 * systemd/: the unit passes `systemd-analyze verify` and keeps its hardening, the sysusers file creates the user,
 * the config for the unit loads with the credential and state directory systemd provides, and the CLI wrapper
 * asks systemd-run for the same user, credential and state directory as the unit.
 *
 * `systemd-analyze verify` checks that the ExecStart= binary exists and is executable. The unit names
 * /usr/bin/node, where Node.js lives on a server (NodeSource packages), but not necessarily on a developer's or
 * CI's machine; so the test verifies a copy of the unit, in a temp directory under the same file name, with
 * /usr/bin/node replaced by the Node.js running this test. Nothing else is changed. (The script path after it
 * is an argument: verify does not look at it.)
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { daemonSchema } from '../../src/config/daemon-schema.ts';
import { onPath, skipWithout } from '../support/required-tool.ts';
import { KEY, readRepoFile, repoFile, tempDir } from './support.ts';

const UNIT = readRepoFile('systemd/pricing-agent.service');
const HAS_ANALYZE = onPath('systemd-analyze');
const NO_ANALYZE = 'skipped: systemd-analyze is not installed (apt-get install systemd)';

/** The unit's directives as [key, value] pairs, in order (a key can repeat). */
function directives(unit: string): [string, string][] {
  return unit
    .split('\n')
    .filter((line) => /^[A-Za-z]+=/.test(line))
    .map((line) => {
      const at = line.indexOf('=');
      return [line.slice(0, at), line.slice(at + 1)];
    });
}

function directive(key: string): string[] {
  return directives(UNIT)
    .filter(([k]) => k === key)
    .map(([, v]) => v);
}

function verify(unitText: string): { status: number | null; output: string } {
  const dir = tempDir();
  const file = join(dir, 'pricing-agent.service');
  writeFileSync(file, unitText);
  const result = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}

const testable = UNIT.replaceAll('ExecStart=/usr/bin/node ', `ExecStart=${process.execPath} `);

describe('systemd/pricing-agent.service', () => {
  skipWithout('systemd-analyze', HAS_ANALYZE, 'systemd');
  it.skipIf(!HAS_ANALYZE)(`passes systemd-analyze verify without a warning${HAS_ANALYZE ? '' : ` (${NO_ANALYZE})`}`, () => {
    expect(testable).not.toBe(UNIT);
    expect(verify(testable)).toEqual({ status: 0, output: '' });
  });

  it.skipIf(!HAS_ANALYZE)(`verify does catch mistakes${HAS_ANALYZE ? '' : ` (${NO_ANALYZE})`}`, () => {
    const typo = verify(testable.replace('ProtectHome=yes', 'ProtectHomes=yes'));
    expect(typo.output).toMatch(/Unknown key (name )?'ProtectHomes'/); // the wording differs between versions
    const missing = verify(UNIT.replaceAll('ExecStart=/usr/bin/node ', 'ExecStart=/nonexistent/node '));
    expect(missing.status).not.toBe(0);
    expect(missing.output).toContain('/nonexistent/node');
  });

  it.skipIf(!HAS_ANALYZE)(`keeps its exposure level at or below 2.0 (systemd-analyze security)${HAS_ANALYZE ? '' : ` (${NO_ANALYZE})`}`, () => {
    const dir = tempDir();
    const file = join(dir, 'pricing-agent.service');
    writeFileSync(file, testable);
    const result = spawnSync('systemd-analyze', ['security', '--offline=yes', '--no-pager', file], { encoding: 'utf8' });
    const level = /Overall exposure level for pricing-agent\.service: ([\d.]+)/.exec(result.stdout)?.[1];
    expect(Number(level), result.stdout + result.stderr).toBeLessThanOrEqual(2);
  });

  it('runs `run` as its own user, with the key as a credential and the state directory', () => {
    expect(directive('User')).toEqual(['pricing-agent']);
    expect(directive('Group')).toEqual(['pricing-agent']);
    expect(directive('ExecStart')).toEqual([
      '/usr/bin/node --max-semi-space-size=8 --max-old-space-size=1536 /opt/pricing-agent/dist/cli/main.js run --config /etc/pricing-agent/pricing-agent.yaml',
    ]);
    expect(directive('Environment')).toContain('MALLOC_ARENA_MAX=2');
    expect(directive('LoadCredential')).toEqual(['pricing_api_key:/etc/pricing-agent/api-key']);
    expect(directive('StateDirectory')).toEqual(['pricing-agent']);
    expect(directive('ConfigurationDirectory')).toEqual(['pricing-agent']);
    expect(directive('ExecReload')).toEqual(['/bin/kill -HUP $MAINPID']);
    expect(directive('Restart')).toEqual(['on-failure']);
    expect(directive('RestartPreventExitStatus')).toEqual(['2']); // a config error: a restart cannot fix it
  });

  it('gives the drain more time than daemon.shutdown_timeout_ms before SIGKILL', () => {
    const drainMs = daemonSchema({ baseDir: '/', env: {}, warn: () => undefined }).parse({}).shutdown_timeout_ms;
    expect(directive('KillSignal')).toEqual(['SIGTERM']);
    const stop = /^(\d+)s$/.exec(directive('TimeoutStopSec')[0] ?? '');
    expect(Number(stop?.[1]) * 1000).toBeGreaterThanOrEqual(drainMs + 10_000);
  });

  it('is hardened', () => {
    const expected: Record<string, string> = {
      NoNewPrivileges: 'yes',
      ProtectSystem: 'strict',
      ProtectHome: 'yes',
      PrivateTmp: 'yes',
      PrivateDevices: 'yes',
      ProtectKernelTunables: 'yes',
      ProtectKernelModules: 'yes',
      ProtectKernelLogs: 'yes',
      ProtectControlGroups: 'yes',
      RestrictAddressFamilies: 'AF_INET AF_INET6 AF_UNIX',
      RestrictNamespaces: 'yes',
      LockPersonality: 'yes',
      CapabilityBoundingSet: '',
      SystemCallArchitectures: 'native',
      UMask: '0027',
      // Off on purpose: V8's JIT needs W+X memory (see the comment in the unit).
      MemoryDenyWriteExecute: 'no',
    };
    for (const [key, value] of Object.entries(expected)) expect(directive(key), key).toEqual([value]);
    expect(directive('SystemCallFilter')).toContain('@system-service');
    expect(directive('ReadWritePaths')).toEqual(['-/srv/pricing-agent']);
  });
});

describe('systemd/pricing-agent.sysusers', () => {
  const noSysusers = skipWithout('systemd-sysusers', onPath('systemd-sysusers'), 'systemd');
  it.skipIf(noSysusers)(`creates the pricing-agent user and group${noSysusers ? ' (skipped: systemd-sysusers is not installed)' : ''}`, () => {
    // Into an empty root directory, as installed: /etc/sysusers.d/pricing-agent.conf.
    const root = tempDir();
    mkdirSync(join(root, 'etc/sysusers.d'), { recursive: true });
    writeFileSync(join(root, 'etc/sysusers.d/pricing-agent.conf'), readRepoFile('systemd/pricing-agent.sysusers'));
    const result = spawnSync('systemd-sysusers', [`--root=${root}`], { encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    const passwd = readFileSync(join(root, 'etc/passwd'), 'utf8');
    expect(passwd).toMatch(/^pricing-agent:x:\d+:\d+:pricing-agent sync agent:\/var\/lib\/pricing-agent:\/usr\/sbin\/nologin$/m);
    expect(readFileSync(join(root, 'etc/group'), 'utf8')).toMatch(/^pricing-agent:x:\d+:$/m);
  });
});

describe('systemd/pricing-agent.yaml', () => {
  it('loads with the credential and state directory that systemd provides', async () => {
    const dir = tempDir();
    const credentials = join(dir, 'credentials');
    mkdirSync(credentials);
    // systemd writes the credential with mode 0400, owned by the service user.
    writeFileSync(join(credentials, 'pricing_api_key'), `${KEY}\n`);
    chmodSync(join(credentials, 'pricing_api_key'), 0o400);
    const state = join(dir, 'state');
    const config = await loadConfig(repoFile('systemd/pricing-agent.yaml'), { CREDENTIALS_DIRECTORY: credentials, STATE_DIRECTORY: state });
    expect(config.api.key).toBe(KEY);
    expect(config.state.dir).toBe(state);
    expect(config.http).toEqual({ enabled: true, host: '127.0.0.1', port: 9464, console: true, allowed_hosts: [] });
    for (const source of config.sources) expect(source.path.startsWith('/srv/pricing-agent/'), source.path).toBe(true);
  });
});

describe('systemd/pricing-agent-cli', () => {
  it('runs the command through systemd-run as the unit runs the daemon, and returns its exit code', () => {
    // A stand-in systemd-run first on PATH: prints its arguments, one per line, and exits 3.
    const bin = tempDir();
    writeFileSync(join(bin, 'systemd-run'), '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\nexit 3\n');
    chmodSync(join(bin, 'systemd-run'), 0o755);
    const env = { PATH: `${bin}:/usr/bin:/bin` };
    const result = spawnSync('sh', [repoFile('systemd/pricing-agent-cli'), 'status', '--json'], { encoding: 'utf8', env });
    expect(result.status).toBe(3);
    const args = result.stdout.trimEnd().split('\n');
    expect(args).toContain('--uid=pricing-agent');
    expect(args).toContain('--gid=pricing-agent');
    expect(args).toContain(`--property=LoadCredential=${directive('LoadCredential')[0]}`);
    expect(args).toContain(`--property=StateDirectory=${directive('StateDirectory')[0]}`);
    expect(args).toContain(`--property=UMask=${directive('UMask')[0]}`);
    expect(args).toContain('--setenv=PRICING_AGENT_CONFIG=/etc/pricing-agent/pricing-agent.yaml');
    expect(args).toContain('--setenv=MALLOC_ARENA_MAX=2');
    expect(args).toContain('--wait');
    // The same node, Node flags and script as ExecStart=, then the user's arguments unchanged.
    const daemon = (directive('ExecStart')[0] ?? '').split(' ');
    const launcher = daemon.slice(0, daemon.indexOf('/opt/pricing-agent/dist/cli/main.js') + 1);
    expect(launcher).toEqual(['/usr/bin/node', '--max-semi-space-size=8', '--max-old-space-size=1536', '/opt/pricing-agent/dist/cli/main.js']);
    expect(args.slice(-launcher.length - 2)).toEqual([...launcher, 'status', '--json']);
  });

  const noShellcheck = skipWithout('shellcheck', onPath('shellcheck'), 'shellcheck');
  it.skipIf(noShellcheck)(`passes shellcheck${noShellcheck ? ' (skipped: shellcheck is not installed)' : ''}`, () => {
    const result = spawnSync('shellcheck', ['-s', 'sh', repoFile('systemd/pricing-agent-cli')], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});
