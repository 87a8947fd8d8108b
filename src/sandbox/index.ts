/**
 * The sandbox: an embedded, faithful simulator of the Pricing Data Public API with a control plane and fault
 * injection (docs/sandbox.md). `startSandbox()` serves it on 127.0.0.1, port 0 by default, and returns its URL, the
 * current API key, the control handle and close().
 */
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../clock.ts';
import { SandboxControl } from './control.ts';
import { dialectNamed, type DialectName } from './dialect.ts';
import type { JobPace } from './jobs.ts';
import { createSandboxServer } from './server.ts';
import { listenError } from '../listen-error.ts';

export type { JobPace } from './jobs.ts';
export { DIALECT_NAMES, DIALECTS, type Dialect, type DialectName } from './dialect.ts';
export { DEFAULT_CLI_PACE } from './jobs.ts';
export { ControlError, SandboxControl, type AmendApprovalInput, type InjectApprovalsInput } from './control.ts';
export type { SandboxState } from './state.ts';
export type { RateLimitInput } from './rate-limit.ts';
export type { FaultInput } from './faults.ts';

export interface SandboxOptions {
  /** The reading of the API document to play (docs/sandbox.md, "Dialects"). Default 'default'. */
  readonly dialect?: DialectName;
  /** Same seed, same data: ids, keys, stores, grids, approvals, exports, faults. Default 1. */
  readonly seed?: number;
  /** Approvals seeded at start. Default 200. */
  readonly approvals?: number;
  /** Known stores (store_id UUIDs). Default 20. */
  readonly stores?: number;
  /** Import job and export-cancel pace. Default 'instant'. */
  readonly jobPace?: JobPace;
  /** Time source for updated_at, rate-limit windows, job pace, latency. Default the system clock. */
  readonly clock?: Clock;
  /** Rows of the large grid ("Full assortment"); 0 leaves it out. Default 60,000. */
  readonly largeGridRows?: number;
  /** Largest JSON request body; larger is 413. Default 64 MiB. */
  readonly maxBodyBytes?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0 (a free port). */
  readonly port?: number;
}

export interface SandboxHandle {
  /** Base URL, e.g. http://127.0.0.1:41234 (no trailing slash). */
  readonly url: string;
  /** The API key currently valid (changes with control.rotateKey() and control.reset()). */
  readonly apiKey: string;
  readonly control: SandboxControl;
  close(): Promise<void>;
}

export const SANDBOX_DEFAULTS = {
  seed: 1,
  approvals: 200,
  stores: 20,
  largeGridRows: 60_000,
  maxBodyBytes: 64 * 1024 * 1024, // 64 MiB
  host: '127.0.0.1',
  port: 0,
} as const;

export async function startSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  const control = new SandboxControl({
    dialect: dialectNamed(options.dialect ?? 'default'),
    seed: options.seed ?? SANDBOX_DEFAULTS.seed,
    approvals: options.approvals ?? SANDBOX_DEFAULTS.approvals,
    stores: options.stores ?? SANDBOX_DEFAULTS.stores,
    jobPace: options.jobPace ?? 'instant',
    clock: options.clock ?? systemClock,
    largeGridRows: options.largeGridRows ?? SANDBOX_DEFAULTS.largeGridRows,
    maxBodyBytes: options.maxBodyBytes ?? SANDBOX_DEFAULTS.maxBodyBytes,
  });
  const server = createSandboxServer(control);
  const host = options.host ?? SANDBOX_DEFAULTS.host;
  const listenPort = options.port ?? SANDBOX_DEFAULTS.port;
  await new Promise<void>((resolve, reject) => {
    const failed = (error: Error) => reject(listenError(error, host, listenPort, '--port'));
    server.once('error', failed);
    server.listen(listenPort, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closed: Promise<void> | null = null;
  return {
    url,
    get apiKey() {
      return control.apiKey;
    },
    control,
    close() {
      closed ??= new Promise<void>((resolve) => {
        control.shutdown();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
