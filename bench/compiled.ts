/**
 * Benchmarks measure the agent as it ships: compiled JavaScript, as `npm run build` writes it to dist/ and the
 * systemd unit and the Docker image run it. Running the TypeScript sources directly goes through Node's type
 * stripper, which costs each process about 30 MB of RSS and the CPU of stripping every module: figures no user sees.
 *
 * `compileForBench` compiles src/ and bench/ (tsconfig.bench.json) into a temporary folder, without type checking
 * (`npm test` does that), and returns where a bench module's compiled twin is.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

export interface CompiledTree {
  /** The compiled twin of a module of this repository (a `file:` URL or path of a .ts file), as a path. */
  path(module: string | URL): string;
  remove(): Promise<void>;
}

/**
 * A compiled tree another process made for this run (`npm run bench:smoke` compiles once for every bench it starts):
 * PRICING_AGENT_BENCH_BUILD names its folder, which the bench uses as it is and leaves in place.
 */
const SHARED_BUILD = process.env['PRICING_AGENT_BENCH_BUILD'];

export async function compileForBench(): Promise<CompiledTree> {
  if (SHARED_BUILD !== undefined && SHARED_BUILD !== '') return treeAt(SHARED_BUILD, () => Promise.resolve());
  const out = await mkdtemp(join(tmpdir(), 'pa-bench-build-'));
  await compileInto(out);
  return treeAt(out, () => rm(out, { recursive: true, force: true }));
}

/** Compiles src/ and bench/ into `out`, an empty folder. */
export async function compileInto(out: string): Promise<void> {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const project = join(ROOT, 'tsconfig.bench.json');
  await promisify(execFile)(process.execPath, [tsc, '-p', project, '--outDir', out, '--noCheck']);
  // Bare imports (undici, zod, ...) resolve from the repository's node_modules, and src/version.ts finds
  // ../package.json, as they do from dist/.
  await symlink(join(ROOT, 'node_modules'), join(out, 'node_modules'), 'dir');
  await symlink(join(ROOT, 'package.json'), join(out, 'package.json'));
  // As scripts/build.sh does: src/cli/ is a CommonJS scope and src/cli/commands/ an ES-module scope again (see
  // src/cli/main.ts); without them Node loads the compiled main.js as an ES module and the agent does not start.
  for (const scope of ['src/cli/package.json', 'src/cli/commands/package.json']) await copyFile(join(ROOT, scope), join(out, scope));
}

function treeAt(out: string, remove: () => Promise<void>): CompiledTree {
  return {
    path(module) {
      const file = typeof module === 'string' && !module.startsWith('file:') ? module : fileURLToPath(module);
      return join(out, relative(ROOT, file)).replace(/\.ts$/, '.js');
    },
    remove,
  };
}
