/**
 * The long-poll hub on its own (no HTTP): whatever the commits and the scopes, a woken request gets exactly the page
 * it would have read at that moment (its stores and the product-level rows after its `after`, at most `limit`), on
 * both paths (new rows handed out from one read, or each concerned waiter reading its own page after a large jump);
 * a page's `upTo` has no row of its scope between its last row and it; a till that comes back from there (as
 * `next_after` tells it to, and as it then waits without a read) still gets every row; a request not woken has
 * nothing to read; waits end on the injected clock; a client that leaves is forgotten.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/config/feed-schema.ts';
import { ConsumerDirectory } from '../../src/feed/consumers.ts';
import { LongPollHub, type PollOutcome } from '../../src/feed/long-poll.ts';
import { maxSeq, readScopedFeed, type StoreScope } from '../../src/store/price-feed.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { approval, deliver, openTempDb } from '../outbox/support.ts';

const STORES = ['s1', 's2', 's3', 's4', 's5'];

function consumer(name: string, scope: StoreScope) {
  const directory = new ConsumerDirectory([{ name, token_file: null, token_sha256: sha256Hex(name.padEnd(40, '.')), stores: scope === '*' ? '*' : [...scope] }]);
  const found = directory.byName(name);
  if (!found) throw new Error('no consumer');
  return found;
}

/** Until the hub has handled every commit announced and every read it started (on PostgreSQL those take turns). */
async function settle(hub: LongPollHub): Promise<void> {
  for (let i = 0; i < 4; i += 1) await new Promise((r) => setImmediate(r)); // the announcement of a commit
  await hub.idle();
}

describe('LongPollHub', () => {
  it('wakes each request with exactly the page it would read, on both paths', async () => {
    const clock = new ManualClock();
    const db = await openTempDb({ now: () => clock.now() });
    let id = 0;
    const scopeArb = fc.oneof(fc.constant<StoreScope>('*'), fc.uniqueArray(fc.constantFrom(...STORES), { minLength: 1, maxLength: 3 }));
    const pollArb = fc.record({ scope: scopeArb, limit: fc.integer({ min: 1, max: 4 }), back: fc.integer({ min: 0, max: 3 }) });
    const stepArb = fc.record({
      polls: fc.array(pollArb, { maxLength: 4 }),
      commit: fc.array(fc.option(fc.constantFrom(...STORES), { freq: 4 }), { maxLength: 6 }),
      // Requests that arrive after the commit and before the hub hears of it (announcements run on a later turn).
      between: fc.array(pollArb, { maxLength: 3 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 6 }), fc.constantFrom(2, 10_000), async (steps, distributeMax) => {
        const hub = new LongPollHub(db, clock, { distributeMax });
        type Entry = { scope: StoreScope; after: number; limit: number; outcome: PollOutcome | null };
        const open: Entry[] = [];
        /** Requests answered with rows come back from the page's upTo, as a till does with next_after. */
        let comeBack: Entry[] = [];
        const answered = async (entry: Entry, outcome: PollOutcome | null) => {
          const rows = await readScopedFeed(db, entry.scope, entry.after, entry.limit);
          expect(outcome).toMatchObject({ kind: 'rows', rows });
          if (outcome?.kind !== 'rows') return;
          const last = rows.at(-1)?.seq ?? entry.after;
          if (rows.length === entry.limit) expect(outcome.upTo).toBe(last);
          expect(outcome.upTo).toBeGreaterThanOrEqual(last);
          expect(outcome.upTo).toBeLessThanOrEqual(await maxSeq(db));
          const skipped = (await readScopedFeed(db, entry.scope, last, 1)).filter((r) => r.seq <= outcome.upTo);
          expect(skipped, 'a row of its scope between its last row and upTo').toEqual([]);
          comeBack.push({ scope: entry.scope, after: outcome.upTo, limit: entry.limit, outcome: null });
        };
        const request = async (p: { scope: StoreScope; limit: number; back?: number; after?: number }) => {
          const after = p.after ?? Math.max(0, (await maxSeq(db)) - (p.back ?? 0));
          const entry: Entry = { scope: p.scope, after, limit: p.limit, outcome: null };
          const expected = await readScopedFeed(db, p.scope, entry.after, p.limit);
          const outcome = hub.poll({ consumer: consumer(`c${open.length}`, p.scope), after: entry.after, limit: p.limit, waitMs: 60_000, signal: new AbortController().signal });
          if (expected.length > 0) {
            await answered(entry, await outcome); // answered at once
            return;
          }
          open.push(entry);
          void outcome.then((o) => (entry.outcome = o));
        };
        for (const step of steps) {
          const returning = comeBack;
          comeBack = [];
          for (const p of returning) await request(p);
          await settle(hub); // first reads done: the hub is in step, and those that come back next wait without a read
          for (const p of step.polls) await request(p);
          if (step.commit.length > 0) await deliver(db, step.commit.map((store) => approval(++id, { store_id: store })));
          for (const p of step.between) await request(p);
          await settle(hub);
          for (const entry of open.splice(0)) {
            if (entry.outcome === null) {
              expect(await readScopedFeed(db, entry.scope, entry.after, entry.limit)).toEqual([]); // nothing for it yet
              open.push(entry);
            } else {
              await answered(entry, entry.outcome);
            }
          }
        }
        hub.close();
        await settle(hub);
      }),
      { numRuns: 50, seed: 14 },
    );
  }, 60_000); // on PostgreSQL each commit and read is a round trip: about 6 s alone, more beside the rest of the suite

  it('answers a till that comes back after a quiet spell with the rows committed meanwhile, while another reads', async () => {
    const clock = new ManualClock();
    const db = await openTempDb({ now: () => clock.now() });
    const hub = new LongPollHub(db, clock);
    const poll = (name: string, scope: StoreScope, after: number, signal = new AbortController().signal) =>
      hub.poll({ consumer: consumer(name, scope), after, limit: 10, waitMs: 60_000, signal });
    await deliver(db, [approval(1, { store_id: 's1' })]);
    const first = await poll('till', ['s1'], 0);
    expect(first).toMatchObject({ kind: 'rows', rows: [{ seq: 1 }], upTo: 1 });
    // Two others wait and leave: the hub was in step at seq 1, and stops watching.
    const leaving = new AbortController();
    const others = [poll('a', ['s2'], 1, leaving.signal), poll('b', ['s3'], 1, leaving.signal)];
    await settle(hub);
    leaving.abort(new Error('gone'));
    for (const other of others) expect(await other).toEqual({ kind: 'gone' });
    expect(hub.waiting).toBe(0);
    // A commit nobody is told about; then the till comes back from its next_after while another request reads.
    await deliver(db, [approval(2, { store_id: 's1' })]);
    const reader = poll('c', ['s4'], 0);
    const back = poll('till', ['s1'], 1);
    await settle(hub);
    await clock.advance(60_000); // had it waited instead, its wait ends empty now
    expect(await back).toMatchObject({ kind: 'rows', rows: [{ seq: 2 }], upTo: 2 });
    expect(await reader).toEqual({ kind: 'rows', rows: [], upTo: 0 });
    hub.close();
  });

  it('ends a wait on the clock, forgets a client that left, and answers the rest on close', async () => {
    const clock = new ManualClock();
    const db = await openTempDb({ now: () => clock.now() });
    const hub = new LongPollHub(db, clock);
    const poll = (waitMs: number, signal = new AbortController().signal) => hub.poll({ consumer: consumer('c', ['s1']), after: 0, limit: 10, waitMs, signal });
    const short = poll(10_000);
    const leaving = new AbortController();
    const left = poll(60_000, leaving.signal);
    const long = poll(60_000);
    await settle(hub); // each reads its first page, then waits
    expect(hub.waiting).toBe(3);
    await clock.advance(9_000);
    expect(hub.waiting).toBe(3);
    await clock.advance(1_000);
    expect(await short).toEqual({ kind: 'rows', rows: [], upTo: 0 });
    leaving.abort(new Error('gone'));
    expect(await left).toEqual({ kind: 'gone' });
    expect(hub.waiting).toBe(1);
    hub.close();
    expect(await long).toEqual({ kind: 'closing' });
    expect(await poll(60_000)).toEqual({ kind: 'closing' });
    expect(await hub.poll({ consumer: consumer('c', ['s1']), after: 5, limit: 10, waitMs: 0, signal: leaving.signal })).toEqual({ kind: 'beyond', last: 0 });
  });
});
