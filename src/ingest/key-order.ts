/**
 * Keeps rows with the same business key in file order across concurrent batches: a batch waits until every
 * in-flight batch holding one of its keys has been answered. Without it, batch 3 could overtake batch 2 and an
 * earlier row would overwrite a later one. Batches are started one at a time, so acquisition is ordered.
 */
export class KeyOrder {
  readonly #lastHolder = new Map<string, Promise<void>>();

  /**
   * Waits for the earlier batches sharing a key with `keys`, then registers this batch as the holder of them until
   * `done` settles.
   */
  async acquire(keys: ReadonlySet<string>, done: Promise<unknown>): Promise<void> {
    const earlier = new Set<Promise<void>>();
    for (const key of keys) {
      const holder = this.#lastHolder.get(key);
      if (holder) earlier.add(holder);
    }
    const settled = done.then(
      () => undefined,
      () => undefined,
    );
    for (const key of keys) this.#lastHolder.set(key, settled);
    void settled.then(() => {
      for (const key of keys) if (this.#lastHolder.get(key) === settled) this.#lastHolder.delete(key);
    });
    await Promise.all(earlier);
  }
}
