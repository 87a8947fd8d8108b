/**
 * Servers on one machine: each a Linux network namespace with one network card (`eth0`, a veth whose other end is
 * on a bridge of the host), its own loopback, its own address and its own /etc/hosts (`ip netns exec` mounts
 * /etc/netns/<name>/hosts over /etc/hosts). The host end of the bridge plays the rest of the network: the database
 * server and the platform listen on its address. Pulling a server's plug is `ip link set eth0 down` inside it, as
 * docs/ha.md says: the kernel then drops what the server sends and nothing reaches it, and no connection is closed.
 *
 * Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN): `ip netns add` and bind mounts.
 */
import { execFile, execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The host's address on the bridge, where the database and the platform listen. */
export const NETWORK_ADDRESS = '10.231.0.1';
const PREFIX_LENGTH = 24;
const BRIDGE = 'pa-servers';

export interface Server {
  readonly name: string;
  /** Its address on the network. */
  readonly address: string;
  /** Runs a program on the server (`ip netns exec`). */
  spawn(argv: readonly string[], options?: SpawnOptions): ChildProcess;
  /** Runs a program on the server and returns its output; throws on a non-zero exit. */
  run(argv: readonly string[]): string;
  /** The same without blocking this process (which serves the platform and the database's clients meanwhile). */
  exec(argv: readonly string[]): Promise<string>;
  /** `ip link set eth0 down` on the server: its network cable pulled. */
  unplug(): void;
  /** `ip link set eth0 up`: plugged back in. */
  plug(): void;
}

const execFileAsync = promisify(execFile);

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function quietly(run: () => unknown): void {
  try {
    run();
  } catch {
    // already gone
  }
}

/** Whether this process may create network namespaces (root with `ip`); the reason when it may not. */
export function serversUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'network namespaces need root: run it as root (sudo npm run test:ha-servers)';
  try {
    ip('netns', 'list');
  } catch {
    return "the `ip` command (iproute2) is missing or refused: install iproute2";
  }
  return null;
}

/**
 * Creates the servers `names` (10.231.0.11, .12, ...), each with `hosts` in its /etc/hosts (name to address). Removes
 * leftovers of an earlier run first.
 */
export function createServers(names: readonly string[], hosts: Readonly<Record<string, string>>): { servers: Server[]; remove(): void } {
  const remove = (): void => {
    for (const name of names) {
      quietly(() => ip('netns', 'del', name));
      rmSync(join('/etc/netns', name), { recursive: true, force: true });
    }
    quietly(() => ip('link', 'del', BRIDGE));
  };
  remove();
  ip('link', 'add', BRIDGE, 'type', 'bridge');
  ip('addr', 'add', `${NETWORK_ADDRESS}/${PREFIX_LENGTH}`, 'dev', BRIDGE);
  ip('link', 'set', BRIDGE, 'up');
  const servers = names.map((name, index): Server => {
    const address = `10.231.0.${11 + index}`;
    const hostEnd = `pa-veth${index}`;
    ip('netns', 'add', name);
    ip('link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', name);
    ip('link', 'set', hostEnd, 'master', BRIDGE);
    ip('link', 'set', hostEnd, 'up');
    ip('-n', name, 'addr', 'add', `${address}/${PREFIX_LENGTH}`, 'dev', 'eth0');
    ip('-n', name, 'link', 'set', 'lo', 'up');
    ip('-n', name, 'link', 'set', 'eth0', 'up');
    mkdirSync(join('/etc/netns', name), { recursive: true });
    const lines = ['127.0.0.1 localhost', `${address} ${name}`, ...Object.entries(hosts).map(([host, at]) => `${at} ${host}`)];
    writeFileSync(join('/etc/netns', name, 'hosts'), `${lines.join('\n')}\n`);
    const inside = (argv: readonly string[]): string[] => ['netns', 'exec', name, ...argv];
    return {
      name,
      address,
      spawn: (argv, options = {}) => spawn('ip', inside(argv), options),
      run: (argv) => ip(...inside(argv)),
      exec: async (argv) => (await execFileAsync('ip', inside(argv), { encoding: 'utf8' })).stdout,
      unplug: () => ip('-n', name, 'link', 'set', 'eth0', 'down'),
      plug: () => ip('-n', name, 'link', 'set', 'eth0', 'up'),
    };
  });
  return { servers, remove };
}
