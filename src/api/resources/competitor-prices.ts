import { callBulk, callImport, callList, callNoContent, callWithBody, itemsPage, type CallOptions } from '../call.ts';
import { CompetitorPrice, CompetitorPricePage, CompetitorPricePatch, CompetitorPriceWrite } from '../schemas/index.ts';
import type { ApiTransport } from '../transport.ts';

export interface CompetitorPriceListQuery {
  item_id?: string;
  competitor_name?: string;
  updated_after?: string;
  limit?: number;
  cursor?: string;
}

export function competitorPricesApi(t: ApiTransport) {
  return {
    /**
     * POST /v1/competitor_prices creates a new row every time and is never retried once it may have reached the
     * server (ApiOutcomeUnknownError). The push pipeline never uses it: bulk is idempotent per business key.
     */
    create: (body: CompetitorPriceWrite, o: CallOptions = {}) =>
      callWithBody(t, { operation: 'competitorPrices.create' }, CompetitorPriceWrite, body, CompetitorPrice, o),
    bulk: (items: readonly CompetitorPriceWrite[], o: CallOptions = {}) => callBulk(t, 'competitorPrices.bulk', items, o),
    /** entity_id is an integer for competitor prices, the only place it varies. */
    patch: (id: number, body: CompetitorPricePatch, o: CallOptions = {}) =>
      callWithBody(t, { operation: 'competitorPrices.patch', id }, CompetitorPricePatch, body, CompetitorPrice, o),
    delete: (id: number, o: CallOptions = {}) => callNoContent(t, { operation: 'competitorPrices.delete', id, signal: o.signal }),
    list: (q: CompetitorPriceListQuery = {}, o: CallOptions = {}) =>
      callList(t, 'competitorPrices.list', 'competitor_prices', CompetitorPricePage, itemsPage, { ...q }, o),
    import: (filePath: string, o: CallOptions = {}) => callImport(t, 'competitorPrices.import', filePath, o),
  };
}
