/**
 * The Dockerfile, without a Docker engine (none runs on these machines): dockerfile-utils lints it (the validator
 * behind VS Code's Dockerfile support; a devDependency, so this runs wherever `npm ci` ran), the rules this project
 * adds are checked on its instructions, the HEALTHCHECK command is run against a real HTTP server, and the build
 * step it runs (`npm run build`, tsc -p tsconfig.build.json) is run and its output started.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { validate } from 'dockerfile-utils';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI_MAIN_FILE, dockerfileInstructions, execForm, finalStage, nodeVersionRule, readRepoFile, REPO, repoFile } from './support.ts';

const DOCKERFILE = readRepoFile('Dockerfile');
const INSTRUCTIONS = dockerfileInstructions(DOCKERFILE);
const FINAL = finalStage(INSTRUCTIONS);

function all(keyword: string, from = INSTRUCTIONS) {
  return from.filter((i) => i.keyword === keyword);
}

describe('Dockerfile lint (dockerfile-utils)', () => {
  it('has no error and no warning', () => {
    const message = (m: string | { value: string }) => (typeof m === 'string' ? m : m.value);
    const problems = validate(DOCKERFILE).map((d) => `line ${d.range.start.line + 1}: ${message(d.message)}`);
    expect(problems).toEqual([]);
  });

  it('the linter does report problems (so an empty list above means something)', () => {
    const broken = 'FROM node:24-bookworm-slim\nMAINTAINER someone\nHEALTHCHECK --interval=abc CMD true\nFROOM x\n';
    expect(validate(broken).length).toBeGreaterThanOrEqual(3);
  });
});

describe('Dockerfile: the rules of this project', () => {
  it('builds on one Node 24 slim base image, with a tag', () => {
    const images = all('FROM')
      .map((i) => i.args.split(/\s+/)[0] ?? '')
      .filter((image) => !all('FROM').some((f) => f.args.endsWith(` AS ${image}`)));
    expect(images).toEqual([expect.stringMatching(/^node:24-(bookworm|trixie)-slim$/)]);
  });

  it('is multi-stage: the build stage runs npm ci and npm run build, the runtime gets production dependencies only', () => {
    expect(all('FROM').length).toBeGreaterThanOrEqual(3);
    const runs = all('RUN').map((i) => i.args);
    expect(runs).toContain('npm ci --no-audit --no-fund');
    expect(runs).toContain('npm run build');
    expect(runs).toContain('npm ci --omit=dev --no-audit --no-fund');
    // The final stage copies node_modules from the stage that installed with --omit=dev, and nothing else installs.
    const copies = all('COPY', FINAL).map((i) => i.args);
    expect(copies).toContain('--from=deps /app/node_modules ./node_modules');
    expect(copies).toContain('--from=build /app/dist ./dist');
    expect(all('RUN', FINAL).some((i) => /\bnpm (ci|install)\b/.test(i.args))).toBe(false);
  });

  it('runs as a non-root user', () => {
    const users = all('USER', FINAL);
    expect(users.length).toBe(1);
    expect(users[0]?.args).toBe('pricing-agent');
    const entrypoint = all('ENTRYPOINT', FINAL)[0];
    expect(entrypoint && users[0] && users[0].line < entrypoint.line).toBe(true);
  });

  it('declares volumes for the state, the inboxes and the outbox, and the config path via PRICING_AGENT_CONFIG', () => {
    const volumes = all('VOLUME', FINAL).flatMap((i) => execForm(i.args));
    expect(volumes).toEqual(['/var/lib/pricing-agent', '/srv/pricing-agent/inbox', '/srv/pricing-agent/outbox']);
    expect(all('ENV', FINAL).map((i) => i.args).join(' ')).toContain('PRICING_AGENT_CONFIG=/etc/pricing-agent/pricing-agent.yaml');
  });

  it('runs with two glibc malloc arenas, as the systemd unit does', () => {
    expect(all('ENV', FINAL).map((i) => i.args).join(' ')).toContain('MALLOC_ARENA_MAX=2');
  });

  it('starts `pricing-agent run` through a script that sets umask 0027 and execs node', () => {
    expect(execForm(all('ENTRYPOINT', FINAL)[0]?.args ?? '')).toEqual(['pricing-agent']);
    expect(execForm(all('CMD', FINAL)[0]?.args ?? '')).toEqual(['run']);
    const script = all('RUN', FINAL).find((i) => i.args.includes('/usr/local/bin/pricing-agent'))?.args ?? '';
    expect(script).toContain("'umask 0027'");
    expect(script).toContain(`'exec node --max-semi-space-size=8 --max-old-space-size=1536 /app/dist/cli/main.js "$@"'`);
  });

  it('copies only what .dockerignore lets into the build context', () => {
    const allowed = readRepoFile('.dockerignore')
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1).replace(/\/$/, ''));
    const sources = all('COPY')
      .filter((i) => !i.args.startsWith('--from='))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    for (const source of sources) expect(allowed, source).toContain(source.replace(/\/$/, ''));
    // Never a local config, a key or state: the allowlist starts by excluding everything.
    expect(readRepoFile('.dockerignore').split('\n')).toContain('*');
  });
});

describe('Dockerfile HEALTHCHECK', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  const healthcheck = all('HEALTHCHECK', FINAL)[0];
  const command = execForm(healthcheck?.args ?? '');

  async function serve(status: number): Promise<string> {
    const server = createServer((req, res) => {
      res.writeHead(req.url === '/healthz' ? status : 404).end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz`;
  }

  function check(url: string): Promise<number | null> {
    // The command as Docker runs it, with `node` being this Node.js; HEALTH_URL only moves the port.
    const [node, ...args] = command;
    expect(node).toBe('node');
    return new Promise((resolve) => {
      const child = spawn(process.execPath, args, { env: { ...process.env, HEALTH_URL: url }, stdio: 'ignore' });
      child.on('exit', (code) => resolve(code));
    });
  }

  it('probes /healthz with an interval, a timeout and a start period', () => {
    expect(healthcheck?.args).toMatch(/^--interval=\d+s --timeout=\d+s --start-period=\d+s --retries=\d+ CMD \[/);
    expect(command.join(' ')).toContain("'http://127.0.0.1:9464/healthz'");
  });

  it('passes on 200, fails on 503 and when nothing listens', async () => {
    expect(await check(await serve(200))).toBe(0);
    expect(await check(await serve(503))).toBe(1);
    const closed = await serve(200);
    await new Promise((resolve) => servers.pop()?.close(resolve));
    expect(await check(closed)).toBe(1);
  });
});

describe('the build the Dockerfile runs', () => {
  // As in the image: /app/dist, /app/package.json (version.ts reads ../package.json), /app/node_modules.
  let app = '';
  let tscOutput = '';
  let tscStatus: number | null = null;
  beforeAll(() => {
    app = mkdtempSync(join(tmpdir(), 'pricing-agent-build-'));
    // --noCheck: the types are checked by `npm run typecheck` (same compiler options); this is about the emit:
    // rootDir, outDir, the rewritten .ts import suffixes, and that the output starts.
    // scripts/build.sh is `npm run build`: tsc, then the package.json files that make dist/cli/main.js CommonJS.
    const tsc = spawnSync('sh', [repoFile('scripts/build.sh'), join(app, 'dist'), '--noCheck'], { cwd: REPO, encoding: 'utf8' });
    tscOutput = tsc.stdout + tsc.stderr;
    tscStatus = tsc.status;
    copyFileSync(repoFile('package.json'), join(app, 'package.json'));
    symlinkSync(repoFile('node_modules'), join(app, 'node_modules'), 'dir');
  }, 120_000);
  afterAll(() => rmSync(app, { recursive: true, force: true }));

  it('`npm run build` (tsc -p tsconfig.build.json) emits dist/cli/main.js, which starts with the package.json beside it', () => {
    expect(tscOutput).toBe('');
    expect(tscStatus).toBe(0);
    expect(existsSync(join(app, 'dist/cli/main.js'))).toBe(true);
    for (const args of [['--help'], ['run', '--help']]) {
      const run = spawnSync(process.execPath, [join(app, 'dist/cli/main.js'), ...args], { encoding: 'utf8' });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(run.stdout).toContain('Usage: pricing-agent');
    }
  });

  // A Node.js older than 22.22 fails while linking the program's modules (Node 20: node:tls has no
  // getCACertificates), before any of the agent's code runs; src/cli/main.ts checks first. Run by a real old node.
  const old = unsupportedNodeOnThisMachine();
  it.skipIf(old === undefined)(`run by an unsupported Node.js (${old?.version ?? 'none on this machine'}): one sentence, exit 1`, () => {
    const node = old?.path ?? '';
    const sentence = new RegExp(`^pricing-agent needs Node\\.js 22\\.22 or newer \\(24 LTS recommended\\), but ${node} is Node\\.js ${old?.version ?? ''}: install Node\\.js 24 LTS from https://nodejs\\.org [^\\n]+\\.\\n$`);
    // `node dist/cli/main.js`, and `pricing-agent` (the bin: the file itself, its shebang finding the old node on PATH).
    const main = join(app, 'dist/cli/main.js');
    chmodSync(main, 0o755);
    const runs = [
      spawnSync(node, [main, 'status'], { encoding: 'utf8' }),
      spawnSync(main, ['demo'], { encoding: 'utf8', env: { ...process.env, PATH: `${dirname(node)}:${process.env['PATH'] ?? ''}` } }),
    ];
    for (const run of runs) {
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(sentence);
      expect(run.status).toBe(1);
    }
    // `node src/cli/main.ts` in a checkout: the TypeScript source itself, which an old Node.js loads as CommonJS.
    const source = spawnSync(node, [CLI_MAIN_FILE, 'demo'], { encoding: 'utf8' });
    expect(source.stdout).toBe('');
    expect(source.stderr).toBe(
      `pricing-agent needs Node.js 22.22 or newer (24 LTS recommended), but ${node} is Node.js ${old?.version ?? ''}: run \`. scripts/use-node.sh\` in ${REPO.replace(/\/$/, '')} to put Node.js 24 from the npm registry first on PATH, or install it from https://nodejs.org.\n`,
    );
    expect(source.status).toBe(1);
  });
});

/** A node binary older than the agent supports (the system's Node.js 20 on these machines), if there is one. */
function unsupportedNodeOnThisMachine(): { path: string; version: string } | undefined {
  const candidates = ['/usr/bin/node', '/usr/local/bin/node', ...(process.env['PATH'] ?? '').split(':').map((dir) => join(dir, 'node'))];
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    const version = spawnSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    if (version !== '' && !nodeVersionRule.isSupportedNode(version)) return { path, version };
  }
  return undefined;
}
