/**
 * Setup file of the `postgres` Vitest project: this file's cluster starts on first use and stops after the file.
 * A file that leaves a connection open to it (a state database it never closed) fails here, naming the connections:
 * files share their worker process, and such a pool's idle connections would fail as uncaught errors inside
 * whichever file the worker runs next, once this cluster stopped.
 */
import { afterAll, inject } from 'vitest';
import { connectionsLeftOpen, stopTestCluster, useClusterTemplate } from './state-db.ts';

useClusterTemplate(inject('pgTemplate'));
afterAll(async () => {
  try {
    const open = await connectionsLeftOpen();
    if (open.length > 0) throw new Error(`this file left ${open.length} connection(s) to its cluster open; close every state database it opens:\n${open.join('\n')}`);
  } finally {
    await stopTestCluster();
  }
});
