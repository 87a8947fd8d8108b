/**
 * One harness for every test of a file: opened in `beforeAll`, closed in `afterAll`. The object returned stands for
 * the harness in the tests and in later hooks; using it before `beforeAll` has run is a mistake the error names.
 */
import { afterAll, beforeAll } from 'vitest';

export function openForFile<T extends { close(): Promise<void> }>(open: () => Promise<T>): T {
  let opened: T | undefined;
  beforeAll(async () => {
    opened = await open();
  });
  afterAll(async () => {
    await opened?.close();
  });
  return new Proxy({} as T, {
    get(_target, key) {
      if (opened === undefined) throw new Error(`the harness opens in beforeAll; read ${String(key)} inside a hook or a test`);
      const value: unknown = Reflect.get(opened, key);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(opened) : value;
    },
  });
}
