/**
 * The record operations of the Public API, written once against `Resource`: bulk (per-row results, never
 * all-or-nothing, idempotent per business key), single upsert keyed on the path id, PATCH, DELETE, GET by id and
 * cursor-paginated lists. A bulk row and an import row go through the same `writeItem`.
 *
 * Choices documented in docs/sandbox.md: an upsert replaces the whole record (fields not sent become null); PATCH
 * changes only the fields sent (null clears); a write that would give a record a business key held by another
 * record is a 422 on the key field; DELETE of an id that never existed is 404, of one already deleted 204 (404 in
 * the strict dialect).
 */
import { z } from 'zod';
import { KEY_SEPARATOR, toValidationErrors, type ValidationError } from '../api/schemas/index.ts';
import { BulkResponseWriter } from './bulk-response.ts';
import type { TableRow } from './entity-table.ts';
import { NOT_FOUND, NO_CONTENT, invalid, json, validationError, type Reply } from './http-io.ts';
import { isReply, nextCursorOf, readListQuery, type ListContext } from './query.ts';
import { parsePathId, type Resource } from './resource.ts';

export interface RowFailure {
  readonly code: string;
  readonly message: string;
}

const BulkEnvelope = z.looseObject({ items: z.array(z.unknown()) });

function firstMessage(errors: readonly ValidationError[]): string {
  const first = errors[0];
  if (!first) return 'invalid row';
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return `${first.loc.join('.')}: ${first.msg}${more}`;
}

/** A row that passed every check of `checkItem`: what `storeItem` writes. */
export interface CheckedItem<W> {
  readonly write: W;
  readonly key: string;
}

/**
 * Validates one bulk item or import row without writing it; returns the write and its business key, or why it is
 * refused. `index` is the bulk position (loc ['body', 'items', index, ...] in messages) or null for an import row
 * (loc is the field). `seen` holds the keys met earlier in the same batch or file, for resources that refuse
 * duplicates.
 */
export function checkItem<R extends TableRow, W>(
  resource: Resource<R, W>,
  item: unknown,
  index: number | null,
  seen: Set<string> | null,
): CheckedItem<W> | RowFailure {
  let write: W;
  // The pre-check vouches that zod would return this very object (see schema-precheck.ts).
  if (resource.precheck(item)) write = item as W;
  else {
    const parsed = resource.writeSchema.safeParse(item, { reportInput: true });
    if (!parsed.success) {
      const prefix = index === null ? [] : ['body', 'items', index];
      return { code: 'validation_error', message: firstMessage(toValidationErrors(parsed.error, prefix)) };
    }
    write = parsed.data;
  }
  const problem = resource.check?.(write);
  if (problem) return { code: problem.code, message: problem.message };
  const key = resource.keyOf(write);
  if (seen !== null) {
    if (seen.has(key)) return { code: 'duplicate_key', message: `duplicate key ${key.replaceAll(KEY_SEPARATOR, ', ')} in this batch; the first occurrence was written` };
    seen.add(key);
  }
  return { write, key };
}

/** Writes a checked item by its business key (update or insert); returns the row's id. */
export function storeItem<R extends TableRow, W>(resource: Resource<R, W>, { write, key }: CheckedItem<W>, now: number): R['id'] {
  const table = resource.table;
  const existing = table.getByKey(key);
  if (existing) {
    const previousKey = existing.key;
    resource.assign(existing, write);
    table.update(existing, now, previousKey);
    return existing.id;
  }
  const row = resource.create(table.issueId(), write);
  table.insert(row, now, true);
  return row.id;
}

/** Every row checked first: a 422 naming each refused one, or every row written and 200. */
function allOrRefused<R extends TableRow, W>(resource: Resource<R, W>, items: readonly unknown[], seen: Set<string> | null, now: number): Reply {
  const checked = items.map((item, index) => checkItem(resource, item, index, seen));
  const refused = checked.flatMap((c, index) => ('write' in c ? [] : [validationError(['body', 'items', index], c.message, c.code)]));
  if (refused.length > 0) return invalid(refused);
  const out = new BulkResponseWriter(items.length);
  checked.forEach((c, index) => out.ok(index, storeItem(resource, c as CheckedItem<W>, now)));
  return { status: 200, bytes: out.finish() };
}

/** Validates and writes one bulk item or import row (checkItem, then storeItem); returns the id or the refusal. */
export function writeItem<R extends TableRow, W>(
  resource: Resource<R, W>,
  item: unknown,
  index: number | null,
  seen: Set<string> | null,
  now: number,
): R['id'] | RowFailure {
  const checked = checkItem(resource, item, index, seen);
  return 'write' in checked ? storeItem(resource, checked, now) : checked;
}

/**
 * A bulk request: 200 with a result per row, never all-or-nothing; or, with `refuseWhole` (the dialect's
 * storeBulkRefusals), a 422 naming every row refused, and nothing of the batch written.
 */
export function bulkReply<R extends TableRow, W>(resource: Resource<R, W>, body: unknown, now: number, refuseWhole = false): Reply {
  // The common case without zod (its array parse copies the array and allocates per element); zod reports the rest.
  const candidate = (body as { items?: unknown } | null | undefined)?.items;
  let items: unknown[];
  if (typeof body === 'object' && body !== null && !Array.isArray(body) && Array.isArray(candidate)) items = candidate;
  else {
    const envelope = BulkEnvelope.safeParse(body, { reportInput: true });
    if (!envelope.success) return invalid(toValidationErrors(envelope.error, ['body']));
    items = envelope.data.items;
  }
  const seen = resource.rejectDuplicateKeys ? new Set<string>() : null;
  if (refuseWhole) return allOrRefused(resource, items, seen, now);
  const out = new BulkResponseWriter(items.length);
  for (let index = 0; index < items.length; index += 1) {
    const outcome = writeItem(resource, items[index], index, seen, now);
    if (typeof outcome === 'object') out.fail(index, outcome.code, outcome.message);
    else out.ok(index, outcome);
  }
  return { status: 200, bytes: out.finish() };
}

/** Validates a single-record body; on success also runs the resource's row check (as a 422 on its field). */
export function parseWrite<R extends TableRow, W>(resource: Resource<R, W>, body: unknown): W | ValidationError[] {
  const parsed = resource.writeSchema.safeParse(body, { reportInput: true });
  if (!parsed.success) return toValidationErrors(parsed.error, ['body']);
  const problem = resource.check?.(parsed.data);
  if (problem) return [validationError(['body', problem.field], problem.message, problem.type ?? 'value_error')];
  return parsed.data;
}

/**
 * A 422 when a write would move a record onto a business key held by another record. A record keeping its own key
 * is never a conflict, even when the index points at another row (competitor single creates may share a key).
 * Records are compared by id: a table may hand out a new object for the same row on every read.
 */
function keyConflict<R extends TableRow, W>(resource: Resource<R, W>, key: string, self: R | undefined): ValidationError[] | null {
  if (self !== undefined && self.key === key) return null;
  const holder = resource.table.getByKey(key);
  if (!holder || holder.id === self?.id) return null;
  return [
    validationError(
      ['body', resource.keyField],
      `Value error, another record (id ${String(holder.id)}) already has this ${resource.keyField}`,
      'value_error',
    ),
  ];
}

/** Rewrites `row` (already in the table) with `write`. */
function rewrite<R extends TableRow, W>(resource: Resource<R, W>, row: R, write: W, now: number): void {
  const previousKey = row.key;
  resource.assign(row, write);
  resource.table.update(row, now, previousKey);
}

/** POST /v1/{products,transactions}/{entity_id}: upsert keyed on the path id; 201 for create and update. */
export function upsertByIdReply<R extends TableRow, W>(resource: Resource<R, W>, rawId: string, body: unknown, now: number): Reply {
  const id = parsePathId(resource.idKind, rawId);
  if (Array.isArray(id)) return invalid(id);
  const write = parseWrite(resource, body);
  if (Array.isArray(write)) return invalid(write);
  const existing = resource.table.getById(id);
  const conflict = keyConflict(resource, resource.keyOf(write), existing);
  if (conflict) return invalid(conflict);
  if (existing) {
    rewrite(resource, existing, write, now);
    return json(201, resource.toJson(existing));
  }
  const row = resource.create(id, write);
  resource.table.insert(row, now);
  return json(201, resource.toJson(row));
}

/** POST /v1/product_store: upsert on the business key; 201 for create and update. */
export function upsertByKeyReply<R extends TableRow, W>(resource: Resource<R, W>, body: unknown, now: number): Reply {
  const write = parseWrite(resource, body);
  if (Array.isArray(write)) return invalid(write);
  const id = writeItem(resource, write, null, null, now);
  if (typeof id === 'object') return invalid([validationError(['body'], id.message, 'value_error')]);
  const row = resource.table.getById(id);
  return row ? json(201, resource.toJson(row)) : NOT_FOUND;
}

export function patchReply<R extends TableRow, W>(resource: Resource<R, W>, rawId: string, body: unknown, now: number): Reply {
  const id = parsePathId(resource.idKind, rawId);
  if (Array.isArray(id)) return invalid(id);
  const parsed = resource.patchSchema.safeParse(body, { reportInput: true });
  if (!parsed.success) return invalid(toValidationErrors(parsed.error, ['body']));
  const row = resource.table.getById(id);
  if (!row) return NOT_FOUND;
  const merged = { ...resource.toWrite(row), ...parsed.data };
  const problem = resource.check?.(merged);
  if (problem) return invalid([validationError(['body', problem.field], problem.message, problem.type ?? 'value_error')]);
  const conflict = keyConflict(resource, resource.keyOf(merged), row);
  if (conflict) return invalid(conflict);
  rewrite(resource, row, merged, now);
  return json(200, resource.toJson(row));
}

/** DELETE by id: 204; an id never issued 404; a row deleted before 204, or 404 with `againNotFound` (the dialect). */
export function deleteReply<R extends TableRow, W>(resource: Resource<R, W>, rawId: string, againNotFound = false): Reply {
  const id = parsePathId(resource.idKind, rawId);
  if (Array.isArray(id)) return invalid(id);
  const row = resource.table.getById(id);
  if (row) {
    resource.table.delete(row);
    return NO_CONTENT;
  }
  return resource.table.wasDeleted(id) && !againNotFound ? NO_CONTENT : NOT_FOUND;
}

export function getReply<R extends TableRow, W>(resource: Resource<R, W>, rawId: string): Reply {
  const id = parsePathId(resource.idKind, rawId);
  if (Array.isArray(id)) return invalid(id);
  const row = resource.table.getById(id);
  return row ? json(200, resource.toJson(row)) : NOT_FOUND;
}

/**
 * A page of a resource's list. `envelope` overrides the resource's own field name for the rows (a dialect may name
 * the rows of a list whose body the document does not show differently).
 */
export function listReply<R extends TableRow, W>(
  resource: Resource<R, W>,
  query: URLSearchParams,
  context: ListContext,
  envelope: 'items' | 'data' = resource.list.envelope,
): Reply {
  const kinds = { ...resource.list.filters, updated_after: 'datetime' } as const;
  const q = readListQuery(query, resource.name, resource.limits, kinds, context);
  if (isReply(q)) return q;
  const { updated_after: updatedAfter, ...filters } = q.filters;
  const filtered = Object.keys(filters).length > 0;
  const page = resource.table.page({
    limit: q.limit,
    after: q.after,
    updatedAfter: updatedAfter === undefined ? null : Date.parse(updatedAfter),
    filter: filtered ? resource.list.matcher(filters) : undefined,
  });
  return json(200, {
    [envelope]: page.rows.map((row) => resource.toJson(row)),
    next_cursor: nextCursorOf(resource.name, page.nextAfter, context),
  });
}
