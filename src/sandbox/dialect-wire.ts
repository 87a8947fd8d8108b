/**
 * What a dialect changes on the wire, applied in one place to every API reply with a JSON body (server.ts) and to
 * delivery pages before they are kept for replay: nulls left out, timestamps in another ISO 8601 form, the end of a
 * listing as an empty cursor. Handlers build their bodies the default way and never think about these.
 *
 * Only timestamps the sandbox writes are rewritten (`Date.toISOString()` form, milliseconds and `Z`); values stored
 * as a client sent them keep their text. The default dialect changes nothing and costs nothing.
 */
import { ApprovedPriceFilters } from '../api/schemas/index.ts';
import type { Reply } from './http-io.ts';
import type { Dialect } from './dialect.ts';

/** The sandbox's own timestamp form (http-io.ts isoTime). */
const OWN_TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.(\d{3})Z$/;

export function rendersDefault(dialect: Dialect): boolean {
  return dialect.nulls === 'present' && dialect.timestamps === 'utc_millis' && dialect.lastCursor === 'null';
}

function timestamp(value: string, dialect: Dialect): string {
  const match = OWN_TIMESTAMP.exec(value);
  if (!match) return value;
  if (dialect.timestamps === 'offset_seconds') return `${match[1]}+00:00`;
  return `${match[1]}.${match[2]}000+00:00`;
}

function render(value: unknown, dialect: Dialect, key: string | null): unknown {
  if (typeof value === 'string') return dialect.timestamps === 'utc_millis' ? value : timestamp(value, dialect);
  if (Array.isArray(value)) return value.map((item) => render(item, dialect, null));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    if (field === null) {
      if (name === 'next_cursor' && key === null && dialect.lastCursor === 'empty') out[name] = '';
      else if (dialect.nulls === 'present') out[name] = null;
      continue;
    }
    out[name] = render(field, dialect, name);
  }
  return out;
}

/** A JSON value as the dialect writes it. */
export function renderBody(body: unknown, dialect: Dialect): unknown {
  return rendersDefault(dialect) ? body : render(body, dialect, null);
}

/** A handler's reply as the dialect writes it (pre-serialized bodies are the handler's business). */
export function renderReply(reply: Reply, dialect: Dialect): Reply {
  if (reply.body === undefined || rendersDefault(dialect)) return reply;
  return { ...reply, body: renderBody(reply.body, dialect) };
}

/**
 * Query parameters the document defines for each list (what a strict server accepts). null: the document does not
 * show them (product_store's filter names), so a strict server accepts the ones the sandbox supports.
 */
export const DOCUMENTED_QUERY: Readonly<Record<string, readonly string[] | null>> = {
  products: ['updated_after', 'limit', 'cursor'],
  product_store: null,
  transactions: ['limit', 'cursor', 'from_date', 'to_date', 'product_id', 'store_id', 'updated_after'],
  competitor_prices: ['limit', 'cursor'],
  grids: ['limit', 'cursor'],
  grid_rows: ['limit', 'cursor', 'columns', 'updated_after'],
  // The document's filters are those of the list's schema (ApprovedPriceFilters, history among them).
  approved_prices: ['limit', 'cursor', ...Object.keys(ApprovedPriceFilters.shape)],
};
