/**
 * Keys by number for the tests of the delta merge: key i is the business key `K<i>`, hashed as the comparison hashes
 * keys, and a product_store scope in a fresh SQLite state to remember them in.
 */
import { hash64, toSigned64, type Hash64 } from '../../src/ingest/delta/fast/hash.ts';
import { deltaScope } from '../../src/store/delta-state.ts';
import type { SqliteDb } from '../../src/store/sqlite/sqlite-db.ts';
import { openTempSqlite } from '../store/support.ts';

/** The 64-bit hash of key i, as the file's sorted runs hold it (hi, lo). */
export const key = (i: number): Hash64 => hash64(`K${i}`);

/** The hash of key i as the delta state stores it (one signed 64-bit integer). */
export const storedKey = (i: number): bigint => toSigned64(key(i).hi, key(i).lo);

/** A fresh SQLite state with the delta scope `name` of product_store. */
export async function productStoreScope(name: string): Promise<{ db: SqliteDb; scope: Awaited<ReturnType<typeof deltaScope>> }> {
  const db = await openTempSqlite();
  return { db, scope: await deltaScope(db, name, 'product_store') };
}
