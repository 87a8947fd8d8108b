/**
 * Keeps rows with the same business key in file order across concurrent batches: a batch waits until every
 * in-flight batch holding one of its keys has been answered. Without it, batch 3 could overtake batch 2 and an
 * earlier row would overwrite a later one. Batches are started one at a time, so acquisition is ordered.
 *
 * At most api.max_connections batches are in flight, so a new batch looks its keys up in those few batches' key
 * sets instead of keeping a map from every key in flight to its holder (which cost an insert and a delete per row).
 */
interface Holder {
  readonly keys: ReadonlySet<string>;
  readonly settled: Promise<void>;
}

export class KeyOrder {
  readonly #holders = new Set<Holder>();

  /**
   * Waits for the earlier batches sharing a key with `keys`, then registers this batch as a holder of them until
   * `done` settles. `keys` must not change afterwards.
   */
  async acquire(keys: ReadonlySet<string>, done: Promise<unknown>): Promise<void> {
    const earlier: Promise<void>[] = [];
    for (const holder of this.#holders) {
      for (const key of keys) {
        if (holder.keys.has(key)) {
          earlier.push(holder.settled);
          break;
        }
      }
    }
    const holder: Holder = {
      keys,
      settled: done.then(
        () => undefined,
        () => undefined,
      ),
    };
    this.#holders.add(holder);
    void holder.settled.then(() => this.#holders.delete(holder));
    await Promise.all(earlier);
  }

  /** Batches registered and not yet settled. */
  get holding(): number {
    return this.#holders.size;
  }
}
