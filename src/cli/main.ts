#!/usr/bin/env -S node --max-semi-space-size=8 --max-old-space-size=1536
/**
 * The `pricing-agent` command (package.json `bin`, the systemd unit, the Docker image; `node src/cli/main.ts` in a
 * checkout). It checks the Node.js version before anything else is loaded: an older Node.js fails while linking the
 * program's modules (src/cli/node-version.ts), so the program comes in by a dynamic import once the check passed.
 * Like node-version.ts, this file must parse on any Node.js: no top-level await, no `?.`, no `??`.
 *
 * The shebang (and the systemd unit, the systemd CLI wrapper and the Docker entrypoint) size Node's heap for the
 * agent instead of for the host: V8 sizes the young generation from the host's memory and lets the old generation
 * grow to four times its live data between collections when the heap limit is 2 GB or more. On a 24 GB server a
 * 1M-row push peaked near 350 MB with the defaults, 225-258 MB with a young generation of 8 MiB, and 156-169 MB
 * with the old generation capped at 1.5 GB as well (V8 then grows it by about 1.8x), for about 3 % more CPU in
 * collections. 1.5 GB is far above what the agent holds (its memory does not grow with file size); a process that
 * reached it would be stopped by Node and restarted by its supervisor rather than take the host's memory.
 */
import { unsupportedNodeMessage } from './node-version.ts';

const unsupported = unsupportedNodeMessage(process.versions.node, process.execPath, import.meta.url);
if (unsupported === undefined) {
  // A failure while loading the program is an unhandled rejection: Node prints it and exits 1, as it would have
  // for a static import.
  void import('./program.ts');
} else {
  process.stderr.write(`${unsupported}\n`);
  process.exitCode = 1;
}
