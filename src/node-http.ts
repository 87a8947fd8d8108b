/**
 * Node's `node:http`, for the servers (sandbox, daemon, feed) and the daemon probe. Modules of the program take it
 * from here, not with an import statement: an ES-module import of node:http builds a facade that reads every export
 * once, and three of them (WebSocket, MessageEvent, CloseEvent) are getters that load Node's own copy of undici
 * (nodejs/node#59686), for classes the agent never uses: in a bare process about 0.1 CPU-seconds and 15 MB of RSS,
 * about 0.05 CPU-seconds for each `status` and 5-8 MB of the idle daemon's RSS. Types still come from `import type
 * ... from 'node:http'`, which leaves no trace at run time. test/cli/lazy-modules.test.ts fails when a command loads
 * Node's undici again.
 */
export const { createServer, request } = process.getBuiltinModule('node:http');
