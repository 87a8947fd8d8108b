/**
 * The agent's modules a bench worker pushes a file with, loaded when the worker asks (dynamic imports: a process that
 * only orchestrates never loads them, and a worker that samples its memory counts their loading as the agent's).
 */
export async function pushModules() {
  const [client, dispatcher, sourceSchema, read, pushFile, sqlite, log, clock] = await Promise.all([
    import('../src/api/client.ts'),
    import('../src/api/dispatcher.ts'),
    import('../src/config/source-schema.ts'),
    import('../src/ingest/read/index.ts'),
    import('../src/ingest/file/push-file.ts'),
    import('../src/store/sqlite/open-sqlite.ts'),
    import('../src/log.ts'),
    import('../src/clock.ts'),
  ]);
  return {
    ApiClient: client.ApiClient,
    createDispatcher: dispatcher.createDispatcher,
    SourceSchema: sourceSchema.SourceSchema,
    compileSource: read.compileSource,
    pushFile: pushFile.pushFile,
    openSqlite: sqlite.openSqlite,
    databasePath: sqlite.databasePath,
    createLogger: log.createLogger,
    systemClock: clock.systemClock,
  };
}
