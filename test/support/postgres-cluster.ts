/**
 * Throwaway PostgreSQL clusters for tests: initdb once into a template folder, then per test file a copy of it
 * started on a free loopback port, stopped (and removed) when the file ends.
 *
 * initdb and the server refuse to run as root: as root they run as the `postgres` user (Debian's package creates it),
 * which then owns the cluster folders. The server runs without fsync (a test cluster is thrown away; nothing has to
 * survive a power cut), so tests measure the agent, not the disk.
 *
 * [library notes] initdb 0.8-1.0 s, start 0.26 s, `cp -a` of a template 0.1 s: initdb once, copy per suite.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where initdb and pg_ctl are: PRICING_AGENT_PG_BIN, `pg_config --bindir`, /usr/lib/postgresql/<newest>/bin, PATH. */
export function postgresBinDir(): string | null {
  const fromEnv = process.env['PRICING_AGENT_PG_BIN'];
  if (fromEnv && existsSync(join(fromEnv, 'initdb'))) return fromEnv;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const version of versions) if (existsSync(join(root, version, 'bin', 'initdb'))) return join(root, version, 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const found = which.stdout.trim();
  return which.status === 0 && found !== '' ? join(found, '..') : null;
}

function requireBinDir(): string {
  const bin = postgresBinDir();
  if (bin === null) {
    throw new Error('PostgreSQL server binaries (initdb) not found: install Debian\'s postgresql package (.ci/run does) or set PRICING_AGENT_PG_BIN');
  }
  return bin;
}

const asRoot = process.getuid?.() === 0;

/**
 * runuser is in /usr/sbin (util-linux), which a CI job's PATH may leave out (`env -i PATH=/usr/local/bin:/usr/bin:/bin`
 * made every PostgreSQL test fail with `spawnSync runuser ENOENT`): looked for there first, then on PATH.
 */
const RUNUSER = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].find((path) => existsSync(path)) ?? 'runuser';

/** Runs a PostgreSQL program, as the postgres user when this process is root. */
function runPg(program: string, args: string[]): string {
  const bin = join(requireBinDir(), program);
  const [file, argv] = asRoot ? [RUNUSER, ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  try {
    return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${program} ${args.join(' ')} failed: ${e.stderr ?? ''}${e.stdout ?? ''}${e.message}`, { cause: error });
  }
}

/** A folder the cluster's user may use: owned by postgres when this process is root. */
function clusterFolder(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (asRoot) {
    chmodSync(dir, 0o711);
    execFileSync('chown', ['postgres:postgres', dir]);
  }
  return dir;
}

/** initdb into a new folder; returns the data directory of the template. */
export function createTemplate(): string {
  const base = clusterFolder('pa-pg-template-');
  const data = join(base, 'data');
  runPg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
  return data;
}

export function removeTemplate(data: string): void {
  rmSync(join(data, '..'), { recursive: true, force: true });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface TestCluster {
  readonly port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust authentication, superuser). */
  readonly url: string;
  /** The same through the cluster's Unix socket: its folder as the URL's host (%2F...), as for peer authentication. */
  readonly socketUrl: string;
  stop(): void;
}

export interface ClusterOptions {
  /**
   * Durable as a production server (fsync, synchronous commits, full-page writes): for benchmarks, so that both
   * backends pay for durability. Tests run without (nothing of a test cluster has to survive a power cut).
   */
  durable?: boolean;
  /**
   * TLS: the server's certificate and key (PEM), `ssl = on`. With `only`, pg_hba.conf accepts TCP connections over
   * TLS only (`hostssl`), as a production server may.
   */
  tls?: { readonly cert: string; readonly key: string; readonly only?: boolean };
  /**
   * Where the server listens, when not only on a free loopback port: more addresses (127.0.0.1 is always one, for
   * `url`), and a fixed port (tried once: an error if it is taken).
   */
  listen?: { readonly addresses: readonly string[]; readonly port?: number };
  /** pg_hba.conf's lines, replacing initdb's (and those of `tls.only`). */
  hba?: string;
}

/** Writes a file of the cluster (its server certificate, pg_hba.conf), owned by the postgres user when root. */
function writeClusterFile(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o600 });
  if (asRoot) execFileSync('chown', ['postgres:postgres', path]);
}

/** The settings and files of `ClusterOptions.tls`, written into the data folder. */
function tlsSettings(data: string, tls: ClusterOptions['tls']): string[] {
  if (tls === undefined) return [];
  writeClusterFile(join(data, 'server.crt'), tls.cert);
  writeClusterFile(join(data, 'server.key'), tls.key);
  if (tls.only === true) writeClusterFile(join(data, 'pg_hba.conf'), 'local all all trust\nhostssl all all 127.0.0.1/32 trust\n');
  return ['-c ssl=on', '-c ssl_cert_file=server.crt', '-c ssl_key_file=server.key'];
}

/** Copies the template and starts it on a free loopback port (a few tries: another process may take the port). */
export async function startCluster(template: string, clusterOptions: ClusterOptions = {}): Promise<TestCluster> {
  const base = clusterFolder('pa-pg-');
  const data = join(base, 'data');
  const socket = join(base, 'sock');
  execFileSync('cp', ['-a', template, data]);
  execFileSync('mkdir', ['-m', '0700', socket]);
  if (asRoot) execFileSync('chown', ['postgres:postgres', socket]);
  const tls = tlsSettings(data, clusterOptions.tls);
  if (clusterOptions.hba !== undefined) writeClusterFile(join(data, 'pg_hba.conf'), clusterOptions.hba);
  const fixedPort = clusterOptions.listen?.port;
  const addresses = ['127.0.0.1', ...(clusterOptions.listen?.addresses ?? [])].join(',');
  let lastError: unknown;
  for (let attempt = 0; attempt < (fixedPort === undefined ? 5 : 1); attempt += 1) {
    const port = fixedPort ?? (await freePort());
    const durability = clusterOptions.durable === true
      ? ['-c shared_buffers=128MB']
      : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off', '-c shared_buffers=32MB'];
    const options = [`-p ${port}`, `-k ${socket}`, `-c listen_addresses=${addresses}`, '-c max_connections=60', ...durability, ...tls].join(' ');
    try {
      runPg('pg_ctl', ['-D', data, '-l', join(base, 'server.log'), '-o', options, '-w', '-t', '30', 'start']);
      let stopped = false;
      const stop = (): void => {
        if (stopped) return;
        stopped = true;
        try {
          runPg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
        } finally {
          rmSync(base, { recursive: true, force: true });
        }
      };
      return { port, url: `postgres://postgres@127.0.0.1:${port}/postgres`, socketUrl: `postgres://postgres@${encodeURIComponent(socket)}:${port}/postgres`, stop };
    } catch (error) {
      lastError = error;
    }
  }
  rmSync(base, { recursive: true, force: true });
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}
