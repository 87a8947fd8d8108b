import { callBulk, callImport, callJson, callList, callNoContent, callWithBody, itemsPage, type CallOptions } from '../call.ts';
import { ProductStorePage, ProductStorePatch, ProductStoreRecord, ProductStoreWrite } from '../schemas/index.ts';
import type { ApiTransport } from '../transport.ts';

export interface ProductStoreListQuery {
  item_id?: string;
  store_id?: string;
  updated_after?: string;
  limit?: number;
  cursor?: string;
}

export function productStoreApi(t: ApiTransport) {
  return {
    list: (q: ProductStoreListQuery = {}, o: CallOptions = {}) =>
      callList(t, 'productStore.list', 'product_store', ProductStorePage, itemsPage, { ...q }, o),
    /** POST /v1/product_store: upsert on (item_id, store_id). */
    upsert: (body: ProductStoreWrite, o: CallOptions = {}) =>
      callWithBody(t, { operation: 'productStore.upsert' }, ProductStoreWrite, body, ProductStoreRecord, o),
    /** A batch must not hold two rows with the same (item_id, store_id): the API rejects the duplicates. */
    bulk: (items: readonly ProductStoreWrite[], o: CallOptions = {}) => callBulk(t, 'productStore.bulk', items, o),
    get: (id: string, o: CallOptions = {}) => callJson(t, { operation: 'productStore.get', id, signal: o.signal }, ProductStoreRecord),
    patch: (id: string, body: ProductStorePatch, o: CallOptions = {}) =>
      callWithBody(t, { operation: 'productStore.patch', id }, ProductStorePatch, body, ProductStoreRecord, o),
    delete: (id: string, o: CallOptions = {}) => callNoContent(t, { operation: 'productStore.delete', id, signal: o.signal }),
    import: (filePath: string, o: CallOptions = {}) => callImport(t, 'productStore.import', filePath, o),
  };
}
