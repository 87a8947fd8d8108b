/**
 * One generation of sandbox state: everything a fresh start with the same options builds, from the seed. reset()
 * replaces the World with a new one (and aborts the old one's running jobs), which is why nothing outside keeps a
 * reference to a World across requests.
 *
 * Seeding order on the data stream is fixed (stores, grids, approvals, exports, store records); ids of rows created at run time
 * come from the ids stream, keys from the keys stream, faults from the faults stream. Seeded timestamps are relative
 * to the start of the UTC day of the clock at start-up (the "epoch"), so two starts with the same seed on the same
 * day (or with the same injected clock) give identical data.
 */
import type { Clock } from '../clock.ts';
import { writeItem } from './crud.ts';
import { ApprovalBook } from './approval-book.ts';
import { ApprovalFactory, type ApprovalShape } from './approval-factory.ts';
import { KeyRing } from './auth.ts';
import { createCompetitorPrices, type CompetitorPriceResource } from './competitor-prices.ts';
import type { Dialect } from './dialect.ts';
import { ExportBook } from './exports.ts';
import { FaultInjector } from './faults.ts';
import { GridCatalog, itemCode } from './grids.ts';
import { JobBook, type JobPace } from './jobs.ts';
import { centsToDecimal, Prng } from './prng.ts';
import { createProductStore, type ProductStoreResource } from './product-store.ts';
import { createProducts, type ProductResource } from './products.ts';
import { RateLimiter } from './rate-limit.ts';
import type { RequestContext } from './router.ts';
import { createTransactions, type TransactionResource } from './transactions.ts';

export interface WorldOptions {
  readonly seed: number;
  readonly approvals: number;
  readonly stores: number;
  readonly jobPace: JobPace;
  readonly clock: Clock;
  readonly largeGridRows: number;
  readonly maxBodyBytes: number;
  /** The reading of the API document this sandbox plays (dialect.ts). */
  readonly dialect: Dialect;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Seeded approvals below this count get no seeded amendments or cancellations (tests count on clean sets). */
const SEED_HISTORY_MIN = 20;

export const DEFAULT_SHAPE: Omit<ApprovalShape, 'stores'> = { productLevelShare: 0.1, futureShare: 0.2 };

export class World {
  readonly options: WorldOptions;
  readonly clock: Clock;
  readonly dialect: Dialect;
  /** Aborted on reset and close: stops this generation's jobs and timers. */
  readonly lifetime = new AbortController();
  readonly epoch: number;
  readonly keys: KeyRing;
  readonly stores: readonly string[];
  readonly storeSet: ReadonlySet<string>;
  /** Products as JSON writes reach them (the dialect decides about fields beyond the canonical ones). */
  readonly products: ProductResource;
  /** Products as CSV imports reach them: extra columns are custom columns in every dialect. Same table. */
  readonly productImports: ProductResource;
  readonly productStore: ProductStoreResource;
  readonly transactions: TransactionResource;
  readonly competitorPrices: CompetitorPriceResource;
  readonly jobs: JobBook;
  readonly grids: GridCatalog;
  readonly approvals: ApprovalBook;
  readonly exports: ExportBook;
  readonly rateLimiter = new RateLimiter();
  readonly faults: FaultInjector;
  /** Delivery pages by request_id, serialized once: a replay answers the identical bytes (until they expire). */
  readonly deliveries = new Map<string, { raw: string; at: number }>();
  readonly counters = {
    requests: 0,
    removed_endpoint_requests: 0,
    forbidden_requests: 0,
    internal_errors: 0,
    delivery_requests: 0,
    delivery_replays: 0,
  };
  /** When false, a 409 of acknowledge has no `conflicts` list (tests the agent's split-the-batch path). */
  ackConflictDetail = true;

  constructor(options: WorldOptions) {
    this.options = options;
    this.clock = options.clock;
    this.dialect = options.dialect;
    this.epoch = Math.floor(options.clock.now() / DAY_MS) * DAY_MS;
    const data = new Prng(options.seed, 'data');
    const ids = new Prng(options.seed, 'ids');
    this.keys = new KeyRing(new Prng(options.seed, 'keys'));
    this.faults = new FaultInjector(new Prng(options.seed, 'faults'));

    this.stores = Array.from({ length: options.stores }, () => data.uuid());
    this.storeSet = new Set(this.stores);
    const products = createProducts(ids, options.dialect.productExtraFields);
    this.products = products.json;
    this.productImports = products.csv;
    this.productStore = createProductStore(ids, this.storeSet, options.dialect.productStoreWithoutStore);
    this.transactions = createTransactions(ids);
    this.competitorPrices = createCompetitorPrices(() => this.clock.now());
    this.jobs = new JobBook(ids);
    this.grids = new GridCatalog(options.seed, this.epoch, options.largeGridRows, data);
    this.approvals = new ApprovalBook(new ApprovalFactory(data, this.grids, this.keys.userId));
    this.#seedApprovals(data, options.approvals);
    this.exports = new ExportBook(data, this.clock, options.jobPace, this.lifetime.signal, this.epoch);
    this.#seedStoreRecords(data); // last on the data stream: the seeded data before it stays as it was
  }

  now(): number {
    return this.clock.now();
  }

  /**
   * One product-store record per store, as a real account has: its stores can be found through
   * GET /v1/product_store (item ids from the grid catalog, ITM-000001 to one per store; written at the epoch).
   */
  #seedStoreRecords(data: Prng): void {
    this.stores.forEach((store_id, i) => {
      const write = {
        item_id: itemCode(i + 1),
        store_id,
        current_price: centsToDecimal(data.int(99, 9999)),
        store_name: `Store ${String(i + 1).padStart(2, '0')}`,
        currency: 'EUR',
      };
      writeItem(this.productStore, write, null, null, this.epoch);
    });
  }

  /** The seeded approvals: spread over the 7 days before the epoch; 5 % amended, 3 % cancelled. */
  #seedApprovals(data: Prng, count: number): void {
    if (count <= 0) return;
    const start = this.epoch - 7 * DAY_MS;
    const step = Math.max(1, Math.floor((7 * DAY_MS - 2 * HOUR_MS) / count));
    this.approvals.add(count, start, step, { ...DEFAULT_SHAPE, stores: this.stores });
    if (count < SEED_HISTORY_MIN) return;
    const amendments = Math.floor(count * 0.05);
    const cancellations = Math.floor(count * 0.03);
    // Draw among the original approvals until a current one comes up, so the counts are exact.
    const current = (): number => {
      for (;;) {
        const row = this.approvals.get(data.int(1, count))!;
        if (row.supersededBy === null && row.cancelled_at === null) return row.id;
      }
    };
    for (let i = 0; i < amendments; i += 1) {
      this.approvals.amend(current(), this.epoch - HOUR_MS + i * 1000, undefined, 'Competitor price change');
    }
    for (let i = 0; i < cancellations; i += 1) this.approvals.cancel(current(), this.epoch - HOUR_MS / 2 + i * 1000);
  }
}

/** What an API handler gets: the request, the World current when it arrived, and the time. */
export interface ApiContext extends RequestContext {
  readonly world: World;
  readonly now: number;
}
