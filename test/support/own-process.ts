/**
 * Test files that run each in a fresh process (vitest.config.ts, the `sqlite-own-process` project; none runs on
 * PostgreSQL too). Every other file shares its worker process, and the modules that worker already loaded, with the
 * files that ran in it before (`isolate: false`): a fresh process and module graph per file cost about a third of the
 * suite's CPU.
 *
 * A file belongs here when it changes what the whole process does beyond its own end: nock's interceptors stay
 * installed in the process after `nock.enableNetConnect()` (a TLS feed test that ran after test/api/client-transport
 * in the same worker waited forever for its 408), and `vi.mock`, `vi.doMock` and `vi.stubGlobal` replace modules or
 * globals for whatever runs next. test/unit/shared-worker.test.ts finds such files and fails when one is missing here.
 */
export const OWN_PROCESS = ['test/api/client-transport.test.ts'];

/** What makes a test file change the whole process (see above). */
export const PROCESS_WIDE = [/(?:from |import\()['"]nock['"]/, /\bvi\.(?:mock|doMock)\(/, /\bvi\.stubGlobal\(/];
