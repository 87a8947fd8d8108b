/**
 * Regression (found by bench:feed, whose clients check that every till gets each row of its store once): a request
 * that arrived after a commit and before the hub heard of it (announcements run on a later turn of the event loop)
 * read the new rows itself, came back with its `after` past them, and waited; the announcement then handed it the
 * same rows again. Rows a change brings are now given to a waiter only after its `after`.
 */
import { expect, it } from 'vitest';
import { sha256Hex } from '../../src/config/feed-schema.ts';
import { ConsumerDirectory } from '../../src/feed/consumers.ts';
import { LongPollHub } from '../../src/feed/long-poll.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { approval, deliver, openTempDb } from '../outbox/support.ts';

it('a till that read the rows of a commit before its announcement does not get them again', async () => {
  const clock = new ManualClock();
  const db = await openTempDb({ now: () => clock.now() });
  const till = new ConsumerDirectory([{ name: 'till', token_file: null, token_sha256: sha256Hex('t'.repeat(40)), stores: ['s1'] }]).byName('till');
  if (!till) throw new Error('no consumer');
  const hub = new LongPollHub(db, clock);
  const poll = (after: number) => hub.poll({ consumer: till, after, limit: 100, waitMs: 30_000, signal: new AbortController().signal });
  const first = poll(0); // waits: the feed is empty
  await deliver(db, [approval(1, { store_id: 's1' }), approval(2, { store_id: 's1' })]); // announced on a later turn
  const second = poll(2); // another request of the till that read rows 1 and 2 before the announcement
  expect(await first).toMatchObject({ kind: 'rows', rows: [{ seq: 1 }, { seq: 2 }] });
  await deliver(db, [approval(3, { store_id: 's1' })]);
  const page = await second;
  expect(page.kind === 'rows' ? page.rows.map((r) => r.seq) : page).toEqual([3]);
  hub.close();
});
