/**
 * The typed client of the whole Public API: 33 operations grouped by resource. Construct one per process (one
 * dispatcher, one rate gate per key) and share it.
 */
import { AuthVerifyResult } from './schemas/index.ts';
import { callJson, type CallOptions } from './call.ts';
import { ApiTransport, type TransportOptions } from './transport.ts';
import { approvedPricesApi } from './resources/approved-prices.ts';
import { competitorPricesApi } from './resources/competitor-prices.ts';
import { gridsApi } from './resources/grids.ts';
import { jobsApi, transactionExportsApi } from './resources/jobs-exports.ts';
import { productStoreApi } from './resources/product-store.ts';
import { productsApi } from './resources/products.ts';
import { transactionsApi } from './resources/transactions.ts';

export class ApiClient {
  readonly transport: ApiTransport;
  readonly auth: { verify(o?: CallOptions): Promise<AuthVerifyResult> };
  readonly products: ReturnType<typeof productsApi>;
  readonly productStore: ReturnType<typeof productStoreApi>;
  readonly transactions: ReturnType<typeof transactionsApi>;
  readonly competitorPrices: ReturnType<typeof competitorPricesApi>;
  readonly jobs: ReturnType<typeof jobsApi>;
  readonly grids: ReturnType<typeof gridsApi>;
  readonly approvedPrices: ReturnType<typeof approvedPricesApi>;
  readonly transactionExports: ReturnType<typeof transactionExportsApi>;

  constructor(options: TransportOptions) {
    const t = new ApiTransport(options);
    this.transport = t;
    this.auth = { verify: (o = {}) => callJson(t, { operation: 'auth.verify', signal: o.signal }, AuthVerifyResult) };
    this.products = productsApi(t);
    this.productStore = productStoreApi(t);
    this.transactions = transactionsApi(t);
    this.competitorPrices = competitorPricesApi(t);
    this.jobs = jobsApi(t);
    this.grids = gridsApi(t);
    this.approvedPrices = approvedPricesApi(t);
    this.transactionExports = transactionExportsApi(t);
  }
}
