/**
 * What each consumer makes the listener hold now: its requests in progress (capped: `feed.max_requests_per_consumer`)
 * and the bytes of their answers written but not yet taken by the client's socket (the listener's own accounting of
 * the memory a consumer costs, bounded by stream-answer.ts; tests read it instead of the process's RSS).
 *
 * A request counts from the moment its token is accepted until its answer is finished or its connection closed
 * (`close` of the response, which comes in both cases), so a long-poll counts while it waits. In memory only: a
 * restart starts from nothing, as no request survives it.
 */
import type { ServerResponse } from 'node:http';

export class ConsumerLoad {
  #limit: number;
  readonly #open = new Map<string, Set<ServerResponse>>();
  readonly #produced = new Map<string, number>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** A new cap (SIGHUP); requests in progress finish. */
  configure(limit: number): void {
    this.#limit = limit;
  }

  get limit(): number {
    return this.#limit;
  }

  /** Counts `res` as one of `consumer`'s requests until it closes; false (nothing counted) when it has `limit`. */
  enter(consumer: string, res: ServerResponse): boolean {
    let open = this.#open.get(consumer);
    if (open === undefined) this.#open.set(consumer, (open = new Set()));
    if (open.size >= this.#limit) return false;
    open.add(res);
    res.once('close', () => {
      open.delete(res);
      if (open.size === 0 && this.#open.get(consumer) === open) this.#open.delete(consumer);
    });
    return true;
  }

  /** Requests of `consumer` in progress. */
  inProgress(consumer: string): number {
    return this.#open.get(consumer)?.size ?? 0;
  }

  /** Bytes of `consumer`'s answers that the listener holds, written but not yet taken by the socket. */
  buffered(consumer: string): number {
    let bytes = 0;
    for (const res of this.#open.get(consumer) ?? []) bytes += res.destroyed ? 0 : res.writableLength;
    return bytes;
  }

  /** Counts answer bytes produced for `consumer` (serialized and handed to its response). */
  wrote(consumer: string, bytes: number): void {
    this.#produced.set(consumer, (this.#produced.get(consumer) ?? 0) + bytes);
  }

  /** Answer bytes produced for `consumer` since the start (tests: work done for a client that went away). */
  produced(consumer: string): number {
    return this.#produced.get(consumer) ?? 0;
  }
}

/**
 * The most bytes one answer holds in the listener while its client does not read: the response's high-water mark
 * (64 KiB, Node's default) plus one slice (stream-answer.ts) plus one row. A consumer holds at most
 * `feed.max_requests_per_consumer` times this.
 */
export const ANSWER_BUFFER_BOUND = 256 * 1024; // 256 KiB
