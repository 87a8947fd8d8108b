import { callBulk, callImport, callList, callNoContent, callWithBody, itemsPage, type CallOptions } from '../call.ts';
import { Product, ProductPage, ProductPatch, ProductWrite } from '../schemas/index.ts';
import type { ApiTransport } from '../transport.ts';

export interface ProductListQuery {
  updated_after?: string;
  limit?: number;
  cursor?: string;
}

export function productsApi(t: ApiTransport) {
  return {
    /** POST /v1/products/{id}: upsert keyed on the internal id in the path. */
    upsert: (id: string, body: ProductWrite, o: CallOptions = {}) =>
      callWithBody(t, { operation: 'products.upsert', id }, ProductWrite, body, Product, o),
    patch: (id: string, body: ProductPatch, o: CallOptions = {}) =>
      callWithBody(t, { operation: 'products.patch', id }, ProductPatch, body, Product, o),
    /** DELETE is idempotent: 204 also when the row is already gone. */
    delete: (id: string, o: CallOptions = {}) => callNoContent(t, { operation: 'products.delete', id, signal: o.signal }),
    /** Items must already be valid ProductWrite rows (the push reader validates every row with that schema). */
    bulk: (items: readonly ProductWrite[], o: CallOptions = {}) => callBulk(t, 'products.bulk', items, o),
    list: (q: ProductListQuery = {}, o: CallOptions = {}) => callList(t, 'products.list', 'products', ProductPage, itemsPage, { ...q }, o),
    import: (filePath: string, o: CallOptions = {}) => callImport(t, 'products.import', filePath, o),
  };
}
