/**
 * `npm run package` (scripts/package.sh): the offline packages. Inside `npm test`, the short version: the x64
 * tarball is built, unpacked, and run with no network (a network namespace with only its own loopback, which the
 * demo's embedded sandbox listens on), no npm and no Node.js on PATH: `bin/pricing-agent --version` and `demo`.
 *
 * `npm run test:package` (PRICING_AGENT_PACKAGE_TEST=full) builds everything: both tarballs and both .debs, checks
 * each binary is of its package's platform, runs lintian on the .debs, and installs, upgrades, removes and purges
 * the amd64 .deb in a throwaway Debian root (debootstrap, then chroot), never on the machine that runs the test,
 * and runs the arm64 tarball's agent under qemu-user (qemu-user-static) with Debian's arm64 C libraries.
 * The root takes minutes to bootstrap: it is kept as a tar in the temp folder, one per day, and unpacked afresh for
 * each run.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPath, skipWithout } from '../support/required-tool.ts';
import { REPO, tempDir } from './support.ts';

const FULL = process.env['PRICING_AGENT_PACKAGE_TEST'] === 'full';
const VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
const ROOT_USER = process.getuid?.() === 0;
/** unshare -n needs root (or user namespaces); CI and the project machines run as root. */
const CAN_UNSHARE = ROOT_USER && onPath('unshare') && onPath('ip');
const NO_UNSHARE = 'skipped: needs root with unshare and ip (CI and the project machines have them)';
/** Building runs tsc and npm ci: minutes on a loaded 2-core machine. */
const BUILD_TIMEOUT_MS = 900_000;
/** A test that unpacks a package or runs the demo: seconds, far more on a machine busy with the rest of npm test. */
const RUN_TIMEOUT_MS = 300_000;

/** Temp folders that live as long as the file's tests (support.ts's tempDir is removed after each test). */
const suiteDirs: string[] = [];
afterAll(() => {
  for (const dir of suiteDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function suiteDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  suiteDirs.push(dir);
  return dir;
}

function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): SpawnSyncReturns<string> {
  return spawnSync(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 300_000,
    maxBuffer: 64 * 1024 * 1024,
  });
}

function ok(result: SpawnSyncReturns<string>, what: string): string {
  expect(result.status, `${what}\n${result.stdout}\n${result.stderr}${result.error ? `\n${result.error.message}` : ''}`).toBe(0);
  return result.stdout;
}

let built: string | undefined;
/**
 * `npm run package` into a fresh folder, once per run of this file; returns the folder. The short version builds the
 * x64 tarball only, compiled without a second type check; the full one everything, which the short tests then use too.
 */
function buildPackages(): string {
  if (built === undefined) {
    const out = suiteDir('pricing-agent-packages-');
    // --no-check: `npm test` type-checked the sources before this file ran, and tsc emits the same JavaScript without.
    const args = FULL ? [] : ['--arch', 'x64', '--no-deb', '--no-check'];
    ok(run('bash', ['scripts/package.sh', '--out', out, ...args], { cwd: REPO, timeoutMs: BUILD_TIMEOUT_MS }), 'npm run package');
    built = out;
  }
  return built;
}

/** The ELF machine of a file: x64, arm64, or what else it is. */
function elfArch(file: string): string {
  const head = Buffer.alloc(20);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, head, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  if (head.readUInt32BE(0) !== 0x7f454c46) return 'not ELF';
  return { 0x3e: 'x64', 0xb7: 'arm64' }[head.readUInt16LE(18)] ?? `machine ${head.readUInt16LE(18)}`;
}

/**
 * A PATH with only the few tools the launcher uses (sh, readlink, dirname), so that no node and no npm can be
 * found: /usr/bin would bring the system's node.
 */
function pathWithoutNode(): string {
  const bin = join(tempDir('pricing-agent-nonode-'), 'bin');
  mkdirSync(bin);
  for (const tool of ['sh', 'readlink', 'dirname']) {
    const found = run('sh', ['-c', `command -v ${tool}`]).stdout.trim();
    symlinkSync(found, join(bin, tool));
  }
  return bin;
}

/** Runs SCRIPT with sh in a new network namespace whose only interface is its own loopback, brought up. */
function offline(script: string, path: string): SpawnSyncReturns<string> {
  const ip = run('sh', ['-c', 'command -v ip']).stdout.trim();
  return run('unshare', ['-n', 'sh', '-c', `${ip} link set lo up && PATH=${path} && export PATH && ${script}`], {
    env: { HOME: tmpdir(), LANG: 'C.UTF-8' },
  });
}

function unpack(tarball: string): string {
  const dir = suiteDir('pricing-agent-unpacked-');
  ok(run('tar', ['-xzf', tarball, '-C', dir]), `tar -xzf ${tarball}`);
  return dir;
}

describe('npm run package: the x64 tarball runs offline', () => {
  let out = '';
  let home = '';
  beforeAll(() => {
    out = buildPackages();
    home = join(unpack(join(out, `pricing-agent-${VERSION}-linux-x64.tar.gz`)), `pricing-agent-${VERSION}-linux-x64`);
  }, BUILD_TIMEOUT_MS);

  it('holds the runtime, the compiled agent, production dependencies only, the unit, the example config, the launcher and INSTALL.txt', () => {
    expect(readdirSync(home).sort()).toEqual(['INSTALL.txt', 'README.md', 'bin', 'config.example.yaml', 'dist', 'node', 'node_modules', 'package.json', 'systemd']);
    expect(elfArch(join(home, 'node/bin/node'))).toBe('x64');
    expect(existsSync(join(home, 'dist/cli/main.js'))).toBe(true);
    expect(readdirSync(join(home, 'node_modules/better-sqlite3/prebuilds'))).toEqual(['linux-x64.node']);
    const modules = readdirSync(join(home, 'node_modules'));
    expect(modules).toEqual(expect.arrayContaining(['better-sqlite3', 'pg', 'undici', 'zod']));
    for (const dev of ['typescript', 'vitest', 'eslint', 'nock', '@types', 'playwright-core']) expect(modules).not.toContain(dev);
    expect(statSync(join(home, 'bin/pricing-agent')).mode & 0o111).not.toBe(0);
    expect(readFileSync(join(home, 'bin/pricing-agent'), 'utf8')).toContain('MALLOC_ARENA_MAX=2 exec "$root/node/bin/node" --max-semi-space-size=8 --max-old-space-size=1536');
    expect(readFileSync(join(home, 'bin/pricing-agent-service'), 'utf8')).toMatch(/^node=\$\{PRICING_AGENT_NODE:-\/opt\/pricing-agent\/node\/bin\/node\}$/m);
    expect(readFileSync(join(home, 'INSTALL.txt'), 'utf8')).toContain(`pricing-agent-${VERSION}-linux-x64/bin/pricing-agent demo`);
    const unit = readFileSync(join(home, 'systemd/pricing-agent.service'), 'utf8');
    expect(unit).toContain('\nExecStart=/opt/pricing-agent/bin/pricing-agent run --config /etc/pricing-agent/pricing-agent.yaml\n');
    expect(unit).toContain('\nConditionPathExists=/etc/pricing-agent/api-key\n');
    expect(existsSync(join(home, 'systemd/pricing-agent.yaml'))).toBe(true);
  });

  it('has a SHA256SUMS that matches', () => {
    expect(readFileSync(join(out, 'SHA256SUMS'), 'utf8')).toMatch(new RegExp(`^[0-9a-f]{64}  pricing-agent-${VERSION.replaceAll('.', '\\.')}-linux-x64\\.tar\\.gz$`, 'm'));
    expect(ok(run('sha256sum', ['-c', 'SHA256SUMS'], { cwd: out }), 'sha256sum -c')).toContain(': OK');
  }, RUN_TIMEOUT_MS);

  it.skipIf(skipWithout('systemd-analyze', onPath('systemd-analyze'), 'systemd'))('its unit passes systemd-analyze verify where the tarball is unpacked', () => {
    const dir = tempDir();
    const unit = readFileSync(join(home, 'systemd/pricing-agent.service'), 'utf8').replaceAll('/opt/pricing-agent/', `${home}/`);
    writeFileSync(join(dir, 'pricing-agent.service'), unit);
    const result = run('systemd-analyze', ['verify', join(dir, 'pricing-agent.service')]);
    expect({ status: result.status, output: `${result.stdout}${result.stderr}`.trim() }).toEqual({ status: 0, output: '' });
  });

  it.skipIf(!CAN_UNSHARE)(`runs --version and the demo with no network, no npm and no node on PATH${CAN_UNSHARE ? '' : ` (${NO_UNSHARE})`}`, () => {
    const path = pathWithoutNode();
    const probe = offline('ip -o link 2>/dev/null; command -v node || echo no-node; command -v npm || echo no-npm', path);
    expect(probe.stdout).toBe('no-node\nno-npm\n');
    const interfaces = run('unshare', ['-n', 'ip', '-o', 'link']);
    expect(ok(interfaces, 'ip -o link in a new namespace').trim().split('\n').map((line) => line.split(':')[1]?.trim())).toEqual(['lo']);

    const launcher = join(home, 'bin/pricing-agent');
    expect(ok(offline(`${launcher} --version`, path), '--version').trim()).toBe(VERSION);
    const demo = offline(`${launcher} demo --clean`, path);
    expect(demo.status, demo.stdout + demo.stderr).toBe(0);
    expect(demo.stdout).toContain('pricing-agent demo: everything checks out');
    expect(demo.stdout).not.toMatch(/^\s+FAIL/m);
  }, RUN_TIMEOUT_MS);
});

// --- npm run test:package -----------------------------------------------------------------------------------------

const HAS_DEB_TOOLS = onPath('dpkg-deb') && onPath('lintian') && onPath('debootstrap') && onPath('chroot');
const FULL_SKIP = !FULL || !CAN_UNSHARE || !HAS_DEB_TOOLS;
const FULL_NOTE = !FULL
  ? ' (skipped: npm run test:package)'
  : FULL_SKIP
    ? ' (skipped: needs root, unshare, dpkg-deb, lintian and debootstrap; .ci/run installs them)'
    : '';

/** The Debian mirror and release this machine uses (its apt sources), for the throwaway root. */
function debianSource(): { mirror: string; suite: string } {
  const release = readFileSync('/etc/os-release', 'utf8');
  const suite = /^VERSION_CODENAME=(\w+)$/m.exec(release)?.[1] ?? 'bookworm';
  const texts = ['/etc/apt/sources.list', ...(existsSync('/etc/apt/sources.list.d') ? readdirSync('/etc/apt/sources.list.d').map((f) => `/etc/apt/sources.list.d/${f}`) : [])]
    .filter((file) => existsSync(file) && statSync(file).isFile())
    .map((file) => readFileSync(file, 'utf8'));
  for (const text of texts) {
    const mirror = /^URIs:\s*(\S+\/debian)\/?\s*$/m.exec(text)?.[1] ?? /^deb\s+(?:\[[^\]]*\]\s+)?(\S+\/debian)\/?\s/m.exec(text)?.[1];
    if (mirror !== undefined) return { mirror, suite };
  }
  return { mirror: 'http://deb.debian.org/debian', suite };
}

/** A fresh minimal Debian root: today's cached tar unpacked, or debootstrap first (minutes) to make that tar. */
function throwawayRoot(): string {
  const { mirror, suite } = debianSource();
  const cacheDir = join(tmpdir(), 'pricing-agent-chroot-cache');
  const cached = join(cacheDir, `${suite}-minbase-${new Date().toISOString().slice(0, 10)}.tar`);
  if (!existsSync(cached)) {
    mkdirSync(cacheDir, { recursive: true });
    for (const old of readdirSync(cacheDir)) rmSync(join(cacheDir, old), { recursive: true, force: true });
    const build = join(cacheDir, 'root');
    ok(run('debootstrap', ['--variant=minbase', suite, build, mirror], { timeoutMs: BUILD_TIMEOUT_MS }), `debootstrap ${suite} from ${mirror}`);
    ok(run('tar', ['--numeric-owner', '-cf', `${cached}.part`, '-C', build, '.']), 'tar of the root');
    renameSync(`${cached}.part`, cached);
    rmSync(build, { recursive: true, force: true });
  }
  const root = join(tempDir('pricing-agent-chroot-'), 'root');
  mkdirSync(root);
  ok(run('tar', ['--numeric-owner', '-xf', cached, '-C', root]), 'unpacking the cached root');
  return root;
}

/** Runs a shell command inside the root, as root. */
function inRoot(root: string, script: string): SpawnSyncReturns<string> {
  return run('chroot', [root, '/bin/sh', '-c', script], { env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8', DEBIAN_FRONTEND: 'noninteractive' } });
}

/** The same .deb as a newer build: version VERSION+1 in its control file and in the agent's package.json. */
function newerBuild(deb: string, dir: string, newVersion: string): string {
  const tree = join(dir, 'tree');
  ok(run('dpkg-deb', ['-R', deb, tree]), 'dpkg-deb -R');
  const control = join(tree, 'DEBIAN/control');
  writeFileSync(control, readFileSync(control, 'utf8').replace(/^Version: .*$/m, `Version: ${newVersion}`));
  const manifest = join(tree, 'usr/lib/pricing-agent/package.json');
  writeFileSync(manifest, readFileSync(manifest, 'utf8').replace(`"version": "${VERSION}"`, `"version": "${newVersion}"`));
  ok(run('sh', ['-c', `cd ${tree} && find . -path ./DEBIAN -prune -o -type f -printf '%P\\0' | sort -z | xargs -0 md5sum > DEBIAN/md5sums`]), 'md5sums');
  const out = join(dir, `pricing-agent_${newVersion}_amd64.deb`);
  ok(run('dpkg-deb', ['--root-owner-group', '-Zgzip', '--build', tree, out]), 'dpkg-deb --build');
  return out;
}

/**
 * Debian's arm64 glibc, libstdc++ and libgcc unpacked into a folder: the loader and libraries that the arm64
 * Node.js needs under qemu-user. Fetched with apt's own lists and cache in that folder (this machine's sources, the
 * arm64 architecture), so the machine's apt and dpkg state is left as it was.
 */
function arm64Sysroot(): string {
  const dir = suiteDir('pricing-agent-arm64-');
  for (const sub of ['lists/partial', 'cache/archives/partial', 'sysroot']) mkdirSync(join(dir, sub), { recursive: true });
  const conf = join(dir, 'apt.conf');
  writeFileSync(
    conf,
    `APT::Architecture "arm64";\nAPT::Architectures { "arm64"; };\nDir::State::Lists "${dir}/lists";\nDir::Cache "${dir}/cache";\nDir::State::status "/dev/null";\n`,
  );
  const env = { ...process.env, APT_CONFIG: conf };
  ok(run('apt-get', ['update', '-qq'], { env }), 'apt-get update (arm64 lists)');
  ok(run('apt-get', ['download', '-qq', 'libc6:arm64', 'libstdc++6:arm64', 'libgcc-s1:arm64'], { cwd: dir, env }), 'apt-get download');
  for (const deb of readdirSync(dir).filter((f) => f.endsWith('.deb'))) ok(run('dpkg-deb', ['-x', join(dir, deb), join(dir, 'sysroot')]), `dpkg-deb -x ${deb}`);
  return join(dir, 'sysroot');
}
const HAS_QEMU = onPath('qemu-aarch64-static');

describe.skipIf(FULL_SKIP)(`npm run package: every package${FULL_NOTE}`, () => {
  let out = '';
  beforeAll(() => {
    out = buildPackages();
  }, BUILD_TIMEOUT_MS);
  const debArch = { x64: 'amd64', arm64: 'arm64' } as const;

  it('builds both tarballs and both .debs, with SHA256SUMS of all four', () => {
    const names = [`pricing-agent-${VERSION}-linux-x64.tar.gz`, `pricing-agent-${VERSION}-linux-arm64.tar.gz`, `pricing-agent_${VERSION}_amd64.deb`, `pricing-agent_${VERSION}_arm64.deb`];
    expect(readdirSync(out).sort()).toEqual(['SHA256SUMS', ...names].sort());
    const sums = ok(run('sha256sum', ['-c', 'SHA256SUMS'], { cwd: out }), 'sha256sum -c');
    for (const name of names) expect(sums).toContain(`${name}: OK`);
  }, RUN_TIMEOUT_MS);

  it.each(['x64', 'arm64'] as const)('the %s tarball and .deb carry that platform’s Node.js and SQLite driver, and nothing of another', (arch) => {
    const home = join(unpack(join(out, `pricing-agent-${VERSION}-linux-${arch}.tar.gz`)), `pricing-agent-${VERSION}-linux-${arch}`);
    expect(elfArch(join(home, 'node/bin/node'))).toBe(arch);
    expect(readdirSync(join(home, 'node_modules/better-sqlite3/prebuilds'))).toEqual([`linux-${arch}.node`]);
    expect(elfArch(join(home, `node_modules/better-sqlite3/prebuilds/linux-${arch}.node`))).toBe(arch);
    const deb = join(out, `pricing-agent_${VERSION}_${debArch[arch]}.deb`);
    expect(ok(run('dpkg-deb', ['-f', deb, 'Architecture']), 'dpkg-deb -f').trim()).toBe(debArch[arch]);
    const tree = tempDir('pricing-agent-deb-');
    ok(run('dpkg-deb', ['-x', deb, tree]), 'dpkg-deb -x');
    expect(elfArch(join(tree, 'usr/lib/pricing-agent/node/bin/node'))).toBe(arch);
    expect(readdirSync(join(tree, 'usr/lib/pricing-agent/node_modules/better-sqlite3/prebuilds'))).toEqual([`linux-${arch}.node`]);
  }, RUN_TIMEOUT_MS);

  // No arm64 machine here: its Node.js runs under qemu-user, started directly with the launcher's flags (the
  // launcher is a shell script that would exec it, which needs binfmt_misc, not available in a container).
  it.skipIf(!HAS_QEMU)('the arm64 tarball runs --version and the demo under qemu-aarch64, offline', () => {
    const home = join(unpack(join(out, `pricing-agent-${VERSION}-linux-arm64.tar.gz`)), `pricing-agent-${VERSION}-linux-arm64`);
    const sysroot = arm64Sysroot();
    const launcher = readFileSync(join(home, 'bin/pricing-agent'), 'utf8');
    const flags = /"\$root\/node\/bin\/node" (.*) "\$root\/dist\/cli\/main\.js"/.exec(launcher)?.[1] ?? '';
    expect(flags).toBe('--max-semi-space-size=8 --max-old-space-size=1536');
    const qemu = run('sh', ['-c', 'command -v qemu-aarch64-static']).stdout.trim();
    const agent = `${qemu} -L ${sysroot} ${home}/node/bin/node ${flags} ${home}/dist/cli/main.js`;
    const path = pathWithoutNode();
    expect(ok(offline(`${agent} --version`, path), '--version under qemu').trim()).toBe(VERSION);
    const demo = offline(`${agent} demo --clean`, path);
    expect(demo.status, demo.stdout + demo.stderr).toBe(0);
    expect(demo.stdout).toContain('pricing-agent demo: everything checks out');
  }, BUILD_TIMEOUT_MS);

  it('lays the .deb out as Debian expects: /usr/lib/pricing-agent, pricing-agent on PATH, the config a conffile, the unit', () => {
    const deb = join(out, `pricing-agent_${VERSION}_amd64.deb`);
    const tree = tempDir('pricing-agent-deb-');
    ok(run('dpkg-deb', ['-R', deb, tree]), 'dpkg-deb -R');
    expect(readlinkSync(join(tree, 'usr/bin/pricing-agent'))).toBe('../lib/pricing-agent/bin/pricing-agent');
    const serviceCli = readFileSync(join(tree, 'usr/lib/pricing-agent/bin/pricing-agent-service'), 'utf8');
    expect(serviceCli).toMatch(/^node=\$\{PRICING_AGENT_NODE:-\/usr\/lib\/pricing-agent\/node\/bin\/node\}$/m);
    expect(serviceCli).toMatch(/^home=\$\{PRICING_AGENT_HOME:-\/usr\/lib\/pricing-agent\}$/m);
    expect(readFileSync(join(tree, 'DEBIAN/conffiles'), 'utf8')).toBe('/etc/pricing-agent/pricing-agent.yaml\n');
    const unit = readFileSync(join(tree, 'lib/systemd/system/pricing-agent.service'), 'utf8');
    expect(unit).toContain('\nExecStart=/usr/lib/pricing-agent/bin/pricing-agent run --config /etc/pricing-agent/pricing-agent.yaml\n');
    expect(unit).toContain('\nConditionPathExists=/etc/pricing-agent/api-key\n');
    expect(ok(run('dpkg-deb', ['-c', deb]), 'dpkg-deb -c')).not.toMatch(/^\S+ (?!root\/root)/m);
  }, RUN_TIMEOUT_MS);

  it.each(['amd64', 'arm64'])('lintian reports no error on the %s .deb', (arch) => {
    const result = run('lintian', ['--no-tag-display-limit', join(out, `pricing-agent_${VERSION}_${arch}.deb`)], { timeoutMs: 900_000 });
    const errors = result.stdout.split('\n').filter((line) => line.startsWith('E: '));
    expect(errors).toEqual([]);
    expect(result.status, result.stdout + result.stderr).toBe(0);
  }, 900_000);

  it('installs, upgrades, removes and purges in a throwaway Debian root', () => {
    const root = throwawayRoot();
    const deb = join(out, `pricing-agent_${VERSION}_amd64.deb`);
    const newVersion = `${VERSION}+1`;
    const newer = newerBuild(deb, tempDir('pricing-agent-newer-'), newVersion);
    mkdirSync(join(root, 'tmp/debs'), { recursive: true });
    ok(run('cp', [deb, newer, join(root, 'tmp/debs/')]), 'cp');
    const wants = join(root, 'etc/systemd/system/multi-user.target.wants/pricing-agent.service');

    // Install.
    ok(inRoot(root, `dpkg -i /tmp/debs/pricing-agent_${VERSION}_amd64.deb`), 'dpkg -i');
    expect(ok(inRoot(root, 'getent passwd pricing-agent'), 'getent').trim()).toMatch(/^pricing-agent:x:\d+:\d+:pricing-agent sync agent:\/var\/lib\/pricing-agent:\/usr\/sbin\/nologin$/);
    expect(ok(inRoot(root, 'stat -c "%U:%G %a" /var/lib/pricing-agent /etc/pricing-agent/pricing-agent.yaml'), 'stat')).toBe('pricing-agent:pricing-agent 750\nroot:pricing-agent 640\n');
    expect(ok(inRoot(root, 'dpkg-query -W -f="\\${Conffiles}" pricing-agent'), 'conffiles')).toMatch(/^ \/etc\/pricing-agent\/pricing-agent\.yaml [0-9a-f]{32}$/m);
    expect(lstatSync(wants).isSymbolicLink()).toBe(true); // enabled...
    expect(readlinkSync(wants)).toBe('/lib/systemd/system/pricing-agent.service');
    expect(existsSync(join(root, 'etc/pricing-agent/api-key'))).toBe(false); // ...but its condition keeps it stopped
    expect(ok(inRoot(root, 'pricing-agent --version'), '--version').trim()).toBe(VERSION);
    // The installed agent runs its demo in the root, offline, with the root's PATH (no node there at all).
    expect(inRoot(root, 'command -v node').status).not.toBe(0);
    const ip = run('sh', ['-c', 'command -v ip']).stdout.trim();
    const demo = run('unshare', ['-n', '-m', 'sh', '-c', `${ip} link set lo up && mount -t proc proc ${root}/proc && chroot ${root} /usr/bin/pricing-agent demo --clean`], {
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8', HOME: '/root' },
    });
    expect(demo.status, demo.stdout + demo.stderr).toBe(0);
    expect(demo.stdout).toContain('pricing-agent demo: everything checks out');

    // The operator configures it; the state gets a file.
    ok(inRoot(root, "printf '# edited by the operator\\n' >> /etc/pricing-agent/pricing-agent.yaml && echo key > /etc/pricing-agent/api-key && touch /var/lib/pricing-agent/pricing-agent.db"), 'configure');

    // Upgrade: the new build is in place, the operator's config, key and state are kept.
    ok(inRoot(root, `dpkg -i --force-confold /tmp/debs/pricing-agent_${newVersion}_amd64.deb`), 'dpkg -i (upgrade)');
    expect(ok(inRoot(root, 'dpkg-query -W -f="\\${Version}" pricing-agent'), 'version')).toBe(newVersion);
    expect(ok(inRoot(root, 'pricing-agent --version'), '--version').trim()).toBe(newVersion);
    expect(readFileSync(join(root, 'etc/pricing-agent/pricing-agent.yaml'), 'utf8')).toContain('# edited by the operator');
    expect(existsSync(join(root, 'var/lib/pricing-agent/pricing-agent.db'))).toBe(true);
    expect(lstatSync(wants).isSymbolicLink()).toBe(true);

    // Remove: the program goes, the config and the state stay.
    ok(inRoot(root, 'dpkg -r pricing-agent'), 'dpkg -r');
    expect(existsSync(join(root, 'usr/lib/pricing-agent'))).toBe(false);
    expect(existsSync(join(root, 'usr/bin/pricing-agent'))).toBe(false);
    expect(existsSync(join(root, 'etc/pricing-agent/pricing-agent.yaml'))).toBe(true);
    expect(existsSync(join(root, 'var/lib/pricing-agent/pricing-agent.db'))).toBe(true);

    // Purge: the config, the key, the state and the enablement go too.
    ok(inRoot(root, 'dpkg -P pricing-agent'), 'dpkg -P');
    expect(existsSync(join(root, 'etc/pricing-agent'))).toBe(false);
    expect(existsSync(join(root, 'var/lib/pricing-agent'))).toBe(false);
    expect(existsSync(wants)).toBe(false);
    expect(inRoot(root, 'dpkg-query -W pricing-agent').status).not.toBe(0);
  }, BUILD_TIMEOUT_MS);
});
