/**
 * The rate gate asked at the moment a request goes on the wire. A request passes the gate (rate-gate.ts), then may
 * still wait: for a connection to open, for its body to be built. A 429 answered on another connection in between
 * closes the gate, yet the request would be sent anyway (issue 11, failure 9: requests reached the server up to
 * 33 ms after a 429). undici calls a handler's onRequestStart right before it writes the request; aborting there
 * means nothing is sent, and the transport sends the request again once the gate opens, without using up an
 * attempt (the server never saw it).
 */
import type { Dispatcher } from 'undici';

/** Thrown through the request when the gate closed between the pass and the write: nothing was sent. */
export class GateClosedError extends Error {
  readonly code = 'RATE_GATE_CLOSED';
  constructor() {
    super('the Retry-After window opened again before the request was written; it waits at the gate');
    this.name = 'GateClosedError';
  }
}

type Handler = Dispatcher.DispatchHandler;
type Controller = Parameters<NonNullable<Handler['onRequestStart']>>[0];

/** Forwards every callback; aborts at onRequestStart when the gate is closed. */
class GateHandler implements Handler {
  readonly #inner: Handler;
  readonly #isClosed: () => boolean;

  constructor(inner: Handler, isClosed: () => boolean) {
    this.#inner = inner;
    this.#isClosed = isClosed;
  }

  onRequestStart(controller: Controller, context: unknown): void {
    this.#inner.onRequestStart?.(controller, context);
    if (this.#isClosed()) controller.abort(new GateClosedError());
  }

  onRequestUpgrade(...args: Parameters<NonNullable<Handler['onRequestUpgrade']>>): void {
    this.#inner.onRequestUpgrade?.(...args);
  }

  onResponseStart(...args: Parameters<NonNullable<Handler['onResponseStart']>>): void {
    this.#inner.onResponseStart?.(...args);
  }

  onResponseData(...args: Parameters<NonNullable<Handler['onResponseData']>>): void {
    this.#inner.onResponseData?.(...args);
  }

  onResponseEnd(...args: Parameters<NonNullable<Handler['onResponseEnd']>>): void {
    this.#inner.onResponseEnd?.(...args);
  }

  onResponseError(...args: Parameters<NonNullable<Handler['onResponseError']>>): void {
    this.#inner.onResponseError?.(...args);
  }

  onResponseStarted(): void {
    this.#inner.onResponseStarted?.();
  }

  onBodySent(chunk: Buffer): void {
    this.#inner.onBodySent?.(chunk);
  }

  onRequestSent(): void {
    this.#inner.onRequestSent?.();
  }
}

/** The dispatcher, with the gate asked when each request is written. */
export function gatedDispatcher(dispatcher: Dispatcher, isClosed: () => boolean): Dispatcher {
  return dispatcher.compose((dispatch) => (options, handler) => dispatch(options, new GateHandler(handler, isClosed)));
}
