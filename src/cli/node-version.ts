/**
 * Which Node.js versions run the agent, and the one sentence an older one gets instead of a stack trace.
 *
 * An unsupported Node.js does not fail in the agent's code but while linking its modules, before any of them runs
 * (Node 20: `node:tls` has no `getCACertificates`; undici 8 needs 22.19). So src/cli/main.ts imports only this
 * module, checks, and loads the program with a dynamic import afterwards.
 *
 * This file and main.ts are parsed by whatever Node.js the user has, however old: ES2019 syntax and dynamic import
 * only (no `?.`, no `??`, no top-level await, no class fields), and nothing imported but node:fs.
 *
 * The same rule is written in scripts/use-node.sh (which cannot run TypeScript on an old Node.js) and as
 * package.json's `engines`; test/packaging/node-version.test.ts holds the three together.
 */
import { existsSync } from 'node:fs';

/** package.json `engines.node`: 22 from 22.22 (undici 8, getCACertificates), 24 and later; 23 is end-of-life. */
export const SUPPORTED_NODE = { oldestOn22: 22, oldest22Minor: 22, from: 24, recommended: 24 } as const;

export function isSupportedNode(version: string): boolean {
  const parts = version.replace(/^v/, '').split('.');
  const major = Number(parts[0]);
  const minor = Number(parts[1]);
  if (!Number.isInteger(major) || !Number.isInteger(minor)) return false;
  if (major >= SUPPORTED_NODE.from) return true;
  return major === SUPPORTED_NODE.oldestOn22 && minor >= SUPPORTED_NODE.oldest22Minor;
}

/**
 * The sentence for an unsupported Node.js, or undefined when this one is supported. `moduleUrl` is the caller's
 * import.meta.url: in a checkout (scripts/use-node.sh beside src/ or dist/) the way out is the bootstrap script,
 * in an installed agent a Node.js 24 from nodejs.org or the distribution.
 */
export function unsupportedNodeMessage(version: string, execPath: string, moduleUrl: string): string | undefined {
  if (isSupportedNode(version)) return undefined;
  const needed = `Node.js ${SUPPORTED_NODE.oldestOn22}.${SUPPORTED_NODE.oldest22Minor} or newer (${SUPPORTED_NODE.recommended} LTS recommended)`;
  const found = `${execPath} is Node.js ${version.replace(/^v/, '')}`;
  const bootstrap = new URL('../../scripts/use-node.sh', moduleUrl);
  const howTo = existsSync(bootstrap)
    ? `run \`. scripts/use-node.sh\` in ${new URL('../..', moduleUrl).pathname.replace(/\/$/, '')} to put Node.js ${SUPPORTED_NODE.recommended} from the npm registry first on PATH, or install it from https://nodejs.org`
    : `install Node.js ${SUPPORTED_NODE.recommended} LTS from https://nodejs.org or your distribution's packages and run the command again`;
  return `pricing-agent needs ${needed}, but ${found}: ${howTo}.`;
}
