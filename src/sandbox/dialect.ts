/**
 * Dialects: several readings of the API document, one sandbox. The document leaves many details "not shown"; the
 * default dialect makes the sandbox's historical choice for each, and the others make different choices that a
 * server following the same document could make just as well. The agent is tested against every dialect
 * (docs/sandbox.md has the table "choice by dialect"; docs/api-assumptions.md says what the agent does about each).
 *
 * A dialect is data: each field is one choice, read by the route that it concerns. Nothing here may contradict the
 * document; every value is a reading of it.
 */
import { z } from 'zod';

export const DIALECT_NAMES = ['default', 'terse', 'strict', 'lenient'] as const;
export type DialectName = (typeof DIALECT_NAMES)[number];

/** How the acknowledge body may carry the ids ("list of up to 500 approval ids"; field names not shown). */
export type AckRequestShape = 'approval_ids' | 'ids' | 'array';

export interface Dialect {
  readonly name: DialectName;
  /** One line for `--help` and the docs. */
  readonly summary: string;

  // Approved prices: acknowledge ---------------------------------------------------------------------------------
  /** Body shapes acknowledge accepts; any other is a 422. */
  readonly ackRequest: readonly AckRequestShape[];
  /**
   * A successful acknowledge (success response: not shown): `ids` 200 {"acknowledged": [every id]}, `none` 204
   * without a body, `changed` 200 {"acknowledged": [only the ids whose state changed]}, `counts` 200
   * {"acknowledged": n, "already_acknowledged": m}.
   */
  readonly ackSuccess: 'ids' | 'none' | 'changed' | 'counts';
  /** An id acknowledged before: a conflicting batch (409), or accepted again without effect. */
  readonly ackRepeat: 'conflict' | 'accept';
  /**
   * The 409 body (not shown): `conflicts` {"detail": {"message", "conflicts": [{id, reason}]}}, `message`
   * {"detail": "<message>"} with no ids, `ids` {"error": "conflict", "conflicting_ids": [ids]}.
   */
  readonly ackConflictBody: 'conflicts' | 'message' | 'ids';
  /** An id the platform does not know: one of the conflicts of a 409, or a 422 naming its position in the body. */
  readonly ackUnknownId: 'conflict' | 'validation';

  // Approved prices: deliveries -----------------------------------------------------------------------------------
  /** What `filters.history` means when the body does not send it (its default on deliveries is not stated). */
  readonly deliveryHistoryDefault: boolean;
  /**
   * `at_least_once`: a delivered row not yet acknowledged is delivered again from a fresh cursor. `exactly_once`:
   * a delivered row leaves the deliverable set, as a history=false GET moves it ("omitted from later reads"); only
   * a replay of its request_id shows it again.
   */
  readonly deliveries: 'at_least_once' | 'exactly_once';
  /**
   * Lifetime of cursors and of replayable request_ids, in ms of the sandbox clock; null: forever. An expired
   * cursor is answered 410, an expired request_id 409 (the id was used and its page is gone).
   */
  readonly expiryMs: number | null;

  // Reads --------------------------------------------------------------------------------------------------------
  /** Optional fields without a value: sent as null, or left out of the object. */
  readonly nulls: 'present' | 'omitted';
  /** Timestamps the server writes: `2026-11-22T10:00:00.000Z`, `2026-11-22T10:00:00+00:00`, `...00.000000+00:00`. */
  readonly timestamps: 'utc_millis' | 'offset_seconds' | 'offset_micros';
  /** Envelope of the lists whose body the document does not show (products, grids): `items` or `data`. */
  readonly undocumentedLists: 'items' | 'data';
  /** next_cursor of a last page: null (left out when nulls are omitted), or the empty string. */
  readonly lastCursor: 'null' | 'empty';
  /** Fields of a grid in the list (not shown beyond a column summary and a row count). */
  readonly gridListFields: 'grid_id' | 'id';
  /** user_id and api_key_id of auth/verify: RFC 4122 UUIDs, or UUID-shaped ids of another variant. */
  readonly verifyIds: 'rfc4122' | 'other_variant';

  // Writes -------------------------------------------------------------------------------------------------------
  /**
   * Product fields the document does not define, in JSON writes (it promises custom columns only through CSV
   * import): stored as custom columns, silently dropped, or refused (422 / a row-level validation_error).
   */
  readonly productExtraFields: 'stored' | 'dropped' | 'rejected';
  /**
   * A product_store write without store_id. The document says store_id is "required on upsert", and also that "a
   * record without store_id is product-level" and "payloads omitting store_id remain product-level": `refused`
   * (missing store_id, a row error in bulk and imports) or `product_level` (stored as the item's product-level
   * record, store_id null, keyed by item_id alone).
   */
  readonly productStoreWithoutStore: 'refused' | 'product_level';
  /** Query parameters the document does not define for an endpoint: ignored, or a 422. */
  readonly unknownQuery: 'ignored' | 'rejected';
  /**
   * A product_store bulk request with rows the platform refuses (an unknown store, a key twice in the batch): the
   * document's table says "200 BulkResponse; ... give a row-level error", its errors section "give a 4xx with a
   * specific error code per row". `results`: 200 with the refusals among the results; `refused`: a 422 whose detail
   * names each refused row (loc ['body', 'items', index]), and nothing of the batch is written.
   */
  readonly storeBulkRefusals: 'results' | 'refused';
  /**
   * DELETE of a row deleted before ("404 Path entity_id unknown | patch or delete of a non-existent row"): 204 as
   * for a row deleted now (a delete is idempotent), or 404 (a deleted row does not exist). An id never issued is 404
   * in every dialect.
   */
  readonly deleteAgain: 'no_content' | 'not_found';

  // Jobs ---------------------------------------------------------------------------------------------------------
  /** Job status names: the document's (queued, running, completed, failed), or pending/processing/done/error. */
  readonly jobStatuses: 'documented' | 'other';
  /** progress while a job is queued: 0, or null. */
  readonly queuedProgress: 0 | null;
  /**
   * An import with rows the platform refuses: `completed` with the row errors listed (`errors: [{line, code,
   * message}]`); or the job `failed` and nothing written, with `none` no detail at all, `rows` the failing rows
   * under `failed_rows: [{row, error}]` (row: the n-th data row), `sample` a count and a few examples.
   */
  readonly jobRowErrors: 'completed' | 'none' | 'rows' | 'sample';
}

const DEFAULT: Dialect = {
  name: 'default',
  summary: "the sandbox's historical reading: the one the agent was first written against",
  ackRequest: ['approval_ids'],
  ackSuccess: 'ids',
  ackRepeat: 'conflict',
  ackConflictBody: 'conflicts',
  ackUnknownId: 'conflict',
  deliveryHistoryDefault: false,
  deliveries: 'at_least_once',
  expiryMs: null,
  nulls: 'present',
  timestamps: 'utc_millis',
  undocumentedLists: 'items',
  lastCursor: 'null',
  gridListFields: 'grid_id',
  verifyIds: 'rfc4122',
  productExtraFields: 'stored',
  productStoreWithoutStore: 'refused',
  unknownQuery: 'ignored',
  storeBulkRefusals: 'results',
  deleteAgain: 'no_content',
  jobStatuses: 'documented',
  queuedProgress: 0,
  jobRowErrors: 'completed',
};

export const DIALECTS: Readonly<Record<DialectName, Dialect>> = {
  default: DEFAULT,
  terse: {
    ...DEFAULT,
    name: 'terse',
    summary: 'says as little as the document allows: 204 acknowledge, no ids in a 409, nulls left out, no job detail',
    ackRequest: ['array'],
    ackSuccess: 'none',
    ackConflictBody: 'message',
    nulls: 'omitted',
    timestamps: 'offset_seconds',
    undocumentedLists: 'data',
    verifyIds: 'other_variant',
    productExtraFields: 'dropped',
    jobRowErrors: 'none',
  },
  strict: {
    ...DEFAULT,
    name: 'strict',
    summary: 'takes the document literally: 422 on undefined fields, {"ids"} only, expiring cursors, exactly-once deliveries',
    ackRequest: ['ids'],
    ackSuccess: 'changed',
    ackRepeat: 'accept',
    ackUnknownId: 'validation',
    deliveries: 'exactly_once',
    expiryMs: 10 * 60 * 1000, // 10 min
    productExtraFields: 'rejected',
    unknownQuery: 'rejected',
    storeBulkRefusals: 'refused',
    deleteAgain: 'not_found',
    jobRowErrors: 'rows',
  },
  lenient: {
    ...DEFAULT,
    name: 'lenient',
    summary: 'forgiving and chatty in its own words: idempotent acknowledge with counts, other names for fields',
    ackRequest: ['approval_ids', 'ids', 'array'],
    ackSuccess: 'counts',
    ackRepeat: 'accept',
    ackConflictBody: 'ids',
    deliveryHistoryDefault: true,
    timestamps: 'offset_micros',
    lastCursor: 'empty',
    gridListFields: 'id',
    jobStatuses: 'other',
    queuedProgress: null,
    jobRowErrors: 'sample',
    productStoreWithoutStore: 'product_level',
  },
};

export const DialectNameSchema = z.enum(DIALECT_NAMES);

export function dialectNamed(name: DialectName): Dialect {
  return DIALECTS[name];
}
