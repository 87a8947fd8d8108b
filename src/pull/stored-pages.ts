/**
 * The hand-over between the two lanes of a pull run: the deliveries lane announces each committed page, the
 * acknowledgements lane waits for them. Only a signal: what to acknowledge is always read from the database
 * ('pending' in approval_acks), so nothing is acknowledged that is not committed.
 */
export class StoredPages {
  #finished = false;
  #waiters: (() => void)[] = [];

  /** True once the deliveries lane has ended (listing complete, failed or aborted): no more pages come. */
  get finished(): boolean {
    return this.#finished;
  }

  /** Called after each page's transaction committed. */
  stored(): void {
    this.#wake();
  }

  /** Called once when the deliveries lane ends, however it ends. */
  finish(): void {
    this.#finished = true;
    this.#wake();
  }

  /** Resolves at the next committed page or at the end of the deliveries lane. */
  next(): Promise<void> {
    if (this.#finished) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
