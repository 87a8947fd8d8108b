/**
 * The hand-over between the two lanes of a pull run: the deliveries lane announces each committed page, the
 * acknowledgements lane waits for them. Only a signal: what to acknowledge is always read from the database
 * ('pending' in approval_acks), so nothing is acknowledged that is not committed.
 */
export class StoredPages {
  #finished = false;
  #count = 0;
  #waiters: (() => void)[] = [];

  /** True once the deliveries lane has ended (listing complete, failed or aborted): no more pages come. */
  get finished(): boolean {
    return this.#finished;
  }

  /** Pages committed so far: taken before reading the database, then given to `next`. */
  get count(): number {
    return this.#count;
  }

  /** Called after each page's transaction committed. */
  stored(): void {
    this.#count += 1;
    this.#wake();
  }

  /** Called once when the deliveries lane ends, however it ends. */
  finish(): void {
    this.#finished = true;
    this.#wake();
  }

  /**
   * Resolves once a page was committed after `seen` pages (`count` when the caller last read the database: a page
   * committed while it was reading is not missed), or at the end of the deliveries lane.
   */
  next(seen: number): Promise<void> {
    if (this.#finished || this.#count > seen) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
