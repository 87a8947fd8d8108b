/** Setup file of every Vitest project: the cleanups registered through test/support/after-test.ts run after each test. */
import { afterAll, afterEach } from 'vitest';
import { runCleanups } from './after-test.ts';

afterEach(runCleanups);
// What a beforeAll or afterAll hook registered after the file's last test.
afterAll(runCleanups);
