/** Setup file of the `postgres` Vitest project: this file's cluster starts on first use and stops after the file. */
import { afterAll, inject } from 'vitest';
import { stopTestCluster, useClusterTemplate } from './state-db.ts';

useClusterTemplate(inject('pgTemplate'));
afterAll(async () => {
  await stopTestCluster();
});
