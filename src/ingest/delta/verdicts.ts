/**
 * What the comparison decided for each line of a file, read back by the send pass: half a byte per line (6 MB for a
 * file of 12 million rows), the only memory of the comparison that grows with the file.
 */

export const VERDICT = {
  /** Not compared: a reject, a blank line, a line inside a row. The send pass decides as without delta. */
  none: 0,
  /** Send it: new, changed, changed on the platform, refused before, or compared under another mapping. */
  send: 1,
  /** The API already holds this row as it is: not sent. */
  unchanged: 2,
  /** Sent and accepted by an earlier attempt at this same file (a restart): counted as sent, not sent again. */
  sentBefore: 3,
  /**
   * Line mode only, between the merge and the comparison's end: the line's hash did not settle it (compare.ts
   * settles it by its content). Never seen by the send pass.
   */
  undecided: 4,
  /** Line mode only, as `undecided`: a line of a key the file holds more than once. */
  undecidedRepeated: 5,
  /**
   * A row of a key the file holds more than once that `duplicate_keys` makes lose to a row found unchanged
   * (StateMerge.winnerOf names it): not sent, counted superseded by the send pass.
   */
  superseded: 6,
} as const;
export type Verdict = (typeof VERDICT)[keyof typeof VERDICT];

/** Lines counted in a range (Verdicts.count, RowFates.unchangedIn): how many, the first and the last. */
export interface LineCount {
  count: number;
  first: number;
  last: number;
}

export class Verdicts {
  #bytes = new Uint8Array(4096);

  set(line: number, verdict: Verdict): void {
    const at = line >>> 1;
    if (at >= this.#bytes.length) {
      let size = this.#bytes.length;
      while (size <= at) size *= 2;
      const grown = new Uint8Array(size);
      grown.set(this.#bytes);
      this.#bytes = grown;
    }
    const shift = (line & 1) * 4;
    this.#bytes[at] = ((this.#bytes[at] as number) & ~(0xf << shift)) | (verdict << shift);
  }

  /** The verdicts as bytes, two lines a byte (to hand to another thread's `include`). */
  bytes(): Uint8Array {
    return this.#bytes;
  }

  /** Takes the verdicts of `other` (bytes()) for the lines it decided: lines this one left undecided. */
  include(other: Uint8Array): void {
    if (other.length > this.#bytes.length) {
      const grown = new Uint8Array(other.length);
      grown.set(this.#bytes);
      this.#bytes = grown;
    }
    const bytes = this.#bytes;
    for (let i = 0; i < other.length; i++) bytes[i] = (bytes[i] as number) | (other[i] as number);
  }

  /** How many of lines [from, to] have `verdict`, and the first and last of them, into `out` (count 0: none). */
  count(from: number, to: number, verdict: Verdict, out: LineCount): void {
    const bytes = this.#bytes;
    let count = 0;
    let first = 0;
    let last = 0;
    for (let line = from; line <= to; line++) {
      const at = line >>> 1;
      const value = at < bytes.length ? ((bytes[at] as number) >>> ((line & 1) * 4)) & 0xf : VERDICT.none;
      if (value !== verdict) continue;
      if (count === 0) first = line;
      last = line;
      count += 1;
    }
    out.count = count;
    out.first = first;
    out.last = last;
  }

  get(line: number): Verdict {
    const at = line >>> 1;
    if (at >= this.#bytes.length) return VERDICT.none;
    return (((this.#bytes[at] as number) >>> ((line & 1) * 4)) & 0xf) as Verdict;
  }
}
