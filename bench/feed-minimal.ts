/**
 * The same-run baseline of bench:feed: the least a feed server can do to answer the bench's read rounds. node:http,
 * the agent's database opened read-only, a token -> store map (no hashing, no scope beyond one store, no rate limit,
 * no long-poll, no logging) and one prepared statement on the (store_id, seq) index: `/feed/v1/changes?after&limit`
 * answers `{"items", "next_after"}` with the same columns, as the agent does. bench:feed runs the same clients against
 * it after the agent and prints the agent's read throughput and peak RSS as ratios of this one's.
 *
 *   node bench/feed-minimal.ts --db FILE --plan FILE     (reports {url} over IPC; exits when the parent disconnects)
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';

const { values } = parseArgs({ options: { db: { type: 'string' }, plan: { type: 'string' } } });
const db = new Database(values.db ?? '', { readonly: true, fileMustExist: true });
const page = db.prepare(
  `SELECT seq, kind, approval_id, predecessor_id, item_id, sku, store_id, approved_price, currency_code, effective_date, recorded_at
   FROM price_feed WHERE store_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
);
const plan = JSON.parse(readFileSync(values.plan ?? '', 'utf8')) as { token: string; store: string }[];
const storeOf = new Map(plan.map((c) => [`Bearer ${c.token}`, c.store]));

const server = createServer({ keepAliveTimeout: 15_000 }, (req, res) => {
  const store = storeOf.get(req.headers.authorization ?? '');
  if (store === undefined) {
    res.writeHead(401).end();
    return;
  }
  const query = new URL(req.url ?? '/', 'http://minimal.invalid').searchParams;
  const after = Number(query.get('after') ?? 0);
  const items = page.all(store, after, Number(query.get('limit') ?? 1000)) as { seq: number }[];
  const body = JSON.stringify({ items, next_after: items.at(-1)?.seq ?? after });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
});
server.listen(0, '127.0.0.1', () => process.send?.({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
process.on('disconnect', () => {
  server.close();
  server.closeAllConnections();
  db.close();
});
