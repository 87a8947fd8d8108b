/**
 * A bulk request the server refused whole for rows it names. The document answers bulk with 200 and a result per
 * row ("bulk endpoints return 200 even when rows fail"), but it also says that invalid store-level records "give a
 * 4xx with a specific error code per row", and a 422's `loc` is "the path to the field including array indices
 * (body, items, index, field name)". A server that validates the whole body before it writes anything refuses the
 * batch with a 422 that names its rows: those rows become the API's rejects with the server's reason, and the rest
 * of the batch is sent again without them (a 422 wrote nothing; bulk is idempotent per business key anyway).
 *
 * A 422 that names anything but rows of the batch (the envelope, a row past its end) stays the batch's failure, and
 * so does the refusal after MAX_REFUSALS_PER_BATCH: a server that names one row at a time cannot make the agent send
 * a batch hundreds of times.
 */
import { API_ERROR_CODES, ApiError } from '../../api/errors.ts';
import type { BulkItemResult, BulkResponse } from '../../api/schemas/index.ts';

/** How many whole-batch refusals naming rows a batch may get before the next one fails it. */
export const MAX_REFUSALS_PER_BATCH = 3;

type Row = Readonly<Record<string, unknown>>;

/**
 * Sends `rows` with `send`; a 422 naming rows of the request takes them out with the server's reason and sends the
 * rest again. The results are one per row of `rows`, in index order, as the API's would be.
 */
export async function sendRefusingNamedRows(send: (rows: readonly Row[]) => Promise<BulkResponse>, rows: readonly Row[]): Promise<BulkResponse> {
  const refused: BulkItemResult[] = [];
  /** The index in `rows` of each row still to send. */
  let remaining = rows.map((_, index) => index);
  for (let refusals = 0; ; refusals += 1) {
    let response: BulkResponse;
    try {
      response = await send(remaining.map((index) => rows[index] as Row));
    } catch (error) {
      const named = refusals < MAX_REFUSALS_PER_BATCH ? rowsNamedBy(error, remaining.length) : null;
      if (named === null) throw error;
      for (const [at, { code, messages }] of named) refused.push({ index: remaining[at] as number, ok: false, code, message: messages.join('; ') });
      remaining = remaining.filter((_, at) => !named.has(at));
      if (remaining.length > 0) continue;
      response = { results: [] };
    }
    const sent = response.results.map((result) => ({ ...result, index: remaining[result.index] as number }));
    return { results: [...sent, ...refused].sort((a, b) => a.index - b.index) };
  }
}

/** Why the server refused one row: its first problem's type, and each problem as "field: message". */
interface RowRefusal {
  readonly code: string;
  readonly messages: string[];
}

/**
 * The rows a 422 names, by their index in the request. Null when it is no 422, names no row, or names anything else
 * (every problem must be one of a row of the request).
 */
function rowsNamedBy(error: unknown, rowsSent: number): Map<number, RowRefusal> | null {
  if (!(error instanceof ApiError) || error.code !== API_ERROR_CODES.validation) return null;
  const problems = error.detail ?? [];
  const named = new Map<number, RowRefusal>();
  for (const problem of problems) {
    const [body, items, index, ...field] = problem.loc;
    const at = Number(index);
    if (body !== 'body' || items !== 'items' || !Number.isInteger(at) || at < 0 || at >= rowsSent) return null;
    const row = named.get(at) ?? { code: problem.type, messages: [] };
    row.messages.push(field.length > 0 ? `${field.join('.')}: ${problem.msg}` : problem.msg);
    named.set(at, row);
  }
  return named.size > 0 ? named : null;
}
