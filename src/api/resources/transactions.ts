import { callBulk, callImport, callList, callNoContent, callWithBody, itemsPage, type CallOptions } from '../call.ts';
import { TransactionPage, TransactionPatch, TransactionWrite, Transaction } from '../schemas/index.ts';
import type { ApiTransport } from '../transport.ts';

export interface TransactionListQuery {
  from_date?: string;
  to_date?: string;
  product_id?: string;
  store_id?: string;
  updated_after?: string;
  limit?: number;
  cursor?: string;
}

export function transactionsApi(t: ApiTransport) {
  return {
    bulk: (items: readonly TransactionWrite[], o: CallOptions = {}) => callBulk(t, 'transactions.bulk', items, o),
    /** POST /v1/transactions/{id}: upsert keyed on the internal id in the path (201). */
    upsert: (id: string, body: TransactionWrite, o: CallOptions = {}) =>
      callWithBody(t, { operation: 'transactions.upsert', id }, TransactionWrite, body, Transaction, o),
    patch: (id: string, body: TransactionPatch, o: CallOptions = {}) =>
      callWithBody(t, { operation: 'transactions.patch', id }, TransactionPatch, body, Transaction, o),
    delete: (id: string, o: CallOptions = {}) => callNoContent(t, { operation: 'transactions.delete', id, signal: o.signal }),
    /** The transactions list names its rows `data` in the document; listPage reads either name. */
    list: (q: TransactionListQuery = {}, o: CallOptions = {}) =>
      callList(t, 'transactions.list', 'transactions', TransactionPage, itemsPage, { ...q }, o),
    import: (filePath: string, o: CallOptions = {}) => callImport(t, 'transactions.import', filePath, o),
  };
}
