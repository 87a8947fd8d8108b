import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { drain, source, tempDir, writeTemp } from './support/read-helpers.ts';

const dir = tempDir();

/** A row of a product_store file; `valid` says whether the reader must accept it. */
const row = fc.oneof(
  fc.record({ id: fc.stringMatching(/^[A-Z][0-9]{1,4}$/), price: fc.stringMatching(/^[0-9]{1,3}\.[0-9]{2}$/) }).map((r) => ({
    text: `${r.id},S1,${r.price},"name, ""quoted"""`,
    valid: true,
    blank: false,
  })),
  fc.constant({ text: 'A,S1,not-a-price,x', valid: false, blank: false }),
  fc.constant({ text: ',S1,1.00,x', valid: false, blank: false }), // missing item_id
  fc.constant({ text: 'A,S1,1.00', valid: false, blank: false }), // too few fields
  fc.constant({ text: 'A,S1,1.00,x,extra', valid: false, blank: false }), // too many
  fc.constant({ text: 'A,S1,1.00,"multi\nline"', valid: true, blank: false }),
  fc.constant({ text: ',,,', valid: false, blank: true }),
  fc.constant({ text: '', valid: false, blank: true }),
);

describe('counts reconcile', () => {
  it('read == accepted + rejected, and every outcome is where the generator put it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(row, { maxLength: 40 }),
        fc.constantFrom('\n', '\r\n'),
        fc.integer({ min: 1, max: 64 }),
        async (rows, eol, chunk) => {
          const text = ['item_id,store_id,current_price,store_name', ...rows.map((r) => r.text)].join(eol) + eol;
          const file = writeTemp(dir, text);
          const { summary, outcomes } = await drain(file, source('product_store'), { highWaterMark: chunk });
          const data = rows.filter((r) => !r.blank);
          expect(summary.complete).toBe(true);
          expect(summary.rows).toBe(data.length);
          expect(summary.accepted + summary.rejected).toBe(summary.rows);
          expect(summary.accepted).toBe(data.filter((r) => r.valid).length);
          expect(summary.blankLines).toBe(rows.length - data.length);
          expect(outcomes.map((o) => o.kind)).toEqual(data.map((r) => (r.valid ? 'row' : 'reject')));
          // Line numbers: the header is line 1, each generated row starts where its text does.
          let line = 2;
          const expectedLines: number[] = [];
          for (const r of rows) {
            if (!r.blank) expectedLines.push(line);
            line += r.text.split('\n').length;
          }
          expect(outcomes.map((o) => o.line)).toEqual(expectedLines);
          expect(summary.lines).toBe(line - 1);
        },
      ),
      { numRuns: 150 },
    );
  });
});
