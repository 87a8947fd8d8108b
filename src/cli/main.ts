#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=8 --max-old-space-size=1536
/**
 * The `pricing-agent` command (package.json `bin`, the systemd unit, the Docker image; `node src/cli/main.ts` in a
 * checkout). It checks the Node.js version before anything else is loaded and gives an unsupported one a sentence
 * instead of a stack trace: an older Node.js fails while linking the program's modules (Node 20: `node:tls` has no
 * `getCACertificates`; undici 8 needs 22.19), so the program (src/cli/commands/) comes in by a dynamic import once
 * the check passed.
 *
 * Whatever Node.js the user has must be able to load this file, however old:
 * - Node.js 20 refuses a `.ts` file in an ES-module scope before running a line of it (ERR_UNKNOWN_FILE_EXTENSION)
 *   but loads one in a CommonJS scope as plain JavaScript. So this folder is a CommonJS scope (src/cli/package.json)
 *   and the program, an ES-module scope again, lives in src/cli/commands/ (its own package.json).
 * - No TypeScript-only syntax (an old Node.js strips no types; parameter types come from default values), ES2019
 *   syntax only (no `?.`, no `??`, no top-level await), no import statement: only `import()`.
 * - The same text runs as an ES module once built (dist/cli/main.js is in the package's ES-module scope): so no
 *   `require` to load anything, and `module`/`__filename` only behind a `typeof` check.
 *
 * The version rule is written here, in package.json `engines` and in scripts/use-node.sh (which cannot run
 * TypeScript on an old Node.js); test/packaging/node-version.test.ts holds the three together.
 *
 * The shebang (and the systemd unit, the systemd CLI wrapper and the Docker entrypoint) size Node's heap for the
 * agent instead of for the host: V8 sizes the young generation from the host's memory and lets the old generation
 * grow to four times its live data between collections when the heap limit is 2 GB or more. On a 24 GB server a
 * 1M-row push peaked near 350 MB with the defaults, 225-258 MB with a young generation of 8 MiB, and 156-169 MB
 * with the old generation capped at 1.5 GB as well (V8 then grows it by about 1.8x), for about 3 % more CPU in
 * collections. 1.5 GB is far above what the agent holds (its memory does not grow with file size); a process that
 * reached it would be stopped by Node and restarted by its supervisor rather than take the host's memory.
 */

/** package.json `engines.node`: 22 from 22.22 (undici 8, getCACertificates), 24 and later; 23 is end-of-life. */
const SUPPORTED_NODE = { oldestOn22: 22, oldest22Minor: 22, from: 24, recommended: 24 };

function isSupportedNode(version = '') {
  const parts = version.replace(/^v/, '').split('.');
  const major = Number(parts[0]);
  const minor = Number(parts[1]);
  if (!Number.isInteger(major) || !Number.isInteger(minor)) return false;
  if (major >= SUPPORTED_NODE.from) return true;
  return major === SUPPORTED_NODE.oldestOn22 && minor >= SUPPORTED_NODE.oldest22Minor;
}

/**
 * The sentence for an unsupported Node.js, or undefined when this one is supported. `scriptPath` is this file's
 * path: in a checkout (scripts/use-node.sh two folders up, beside src/ or dist/) the way out is the bootstrap
 * script, in an installed agent a Node.js 24 from nodejs.org or the distribution. `exists` answers for a path.
 */
function unsupportedNodeMessage(version = '', execPath = '', scriptPath = '', exists = (_path = '') => false) {
  if (isSupportedNode(version)) return undefined;
  const needed = `Node.js ${SUPPORTED_NODE.oldestOn22}.${SUPPORTED_NODE.oldest22Minor} or newer (${SUPPORTED_NODE.recommended} LTS recommended)`;
  const found = `${execPath} is Node.js ${version.replace(/^v/, '')}`;
  const root = scriptPath.split('/').slice(0, -3).join('/');
  const howTo = exists(`${root}/scripts/use-node.sh`)
    ? `run \`. scripts/use-node.sh\` in ${root} to put Node.js ${SUPPORTED_NODE.recommended} from the npm registry first on PATH, or install it from https://nodejs.org`
    : `install Node.js ${SUPPORTED_NODE.recommended} LTS from https://nodejs.org or your distribution's packages and run the command again`;
  return `pricing-agent needs ${needed}, but ${found}: ${howTo}.`;
}

/** This file's real path, as CommonJS (src/) or as an ES module (dist/, where Node sets argv[1] to it). */
function thisScript() {
  // getBuiltinModule: Node.js 20.16 and later; without it the message just leaves the bootstrap script out.
  const fs = typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule('node:fs') : undefined;
  const path = typeof __filename === 'string' ? __filename : process.argv[1] || '';
  try {
    return { path: fs ? fs.realpathSync(path) : path, exists: (p = '') => (fs ? fs.existsSync(p) : false) };
  } catch {
    return { path, exists: () => false };
  }
}

// Required by a test (test/packaging/node-version.test.ts): hand over the rule, run nothing.
if (typeof module === 'object' && typeof require === 'function' && require.main !== module) {
  module.exports = { SUPPORTED_NODE, isSupportedNode, unsupportedNodeMessage };
} else {
  const script = thisScript();
  const unsupported = unsupportedNodeMessage(process.versions.node, process.execPath, script.path, script.exists);
  if (unsupported === undefined) {
    // A failure while loading the program is an unhandled rejection: Node prints it and exits 1, as it would have
    // for a static import.
    void import('./commands/program.ts');
  } else {
    process.stderr.write(`${unsupported}\n`);
    process.exitCode = 1;
  }
}
