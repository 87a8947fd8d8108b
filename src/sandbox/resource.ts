/**
 * What the four writable resources (products, product_store, transactions, competitor_prices) tell the generic
 * CRUD, bulk and import code about themselves. Each resource module implements this once; the operations in
 * crud.ts and import-job.ts are written once against it, so a bulk row, an import row and a single upsert follow
 * exactly the same rules.
 */
import type { z } from 'zod';
import { uuid, type PageLimit, type ValidationError } from '../api/schemas/index.ts';
import type { EntityTable, TableRow } from './entity-table.ts';
import { validationError } from './http-io.ts';
import type { QueryKind } from './query.ts';

/** A row-level refusal beyond the schema, e.g. product_store's unknown store. */
export interface RowProblem {
  readonly code: string;
  readonly field: string;
  readonly message: string;
  /** The 422 `type` of a single write refused for this problem; default value_error. */
  readonly type?: string;
}

export interface Resource<R extends TableRow, W> {
  readonly name: string;
  readonly table: EntityTable<R>;
  /** The API-side schema (`*Input`: decimals as strings or numbers). */
  readonly writeSchema: z.ZodType<W>;
  /**
   * Compiled from a shared schema whose accepted rows writeSchema accepts unchanged (the agent-side `*Write`,
   * decimals as strings): true means "valid, use the input as is" (schema-precheck.ts). False means "ask zod".
   */
  readonly precheck: (input: unknown) => boolean;
  readonly patchSchema: z.ZodType<Partial<W>>;
  readonly idKind: 'uuid' | 'int';
  /** Where a key conflict is reported in a 422 (the first field of the business key). */
  readonly keyField: string;
  /** product_store only: later rows of a batch (or import) with a key already seen are `duplicate_key`. */
  readonly rejectDuplicateKeys: boolean;
  /** Names of the CSV columns an import requires. */
  readonly requiredColumns: readonly string[];
  /** All known CSV columns; null means any extra column is accepted (products: custom columns). */
  readonly knownColumns: readonly string[] | null;
  readonly limits: PageLimit;
  /** The list endpoint: envelope field and filters (besides updated_after). */
  readonly list: {
    readonly envelope: 'items' | 'data';
    readonly filters: Readonly<Record<string, QueryKind>>;
    /** Builds the row predicate for the given filters once per request (dates parsed once, not per row). */
    matcher(filters: Readonly<Record<string, string>>): (row: R) => boolean;
  };
  keyOf(write: W): string;
  check?(write: W): RowProblem | null;
  create(id: R['id'], write: W): R;
  /** Replaces the row's fields with `write` (an upsert replaces the whole record). */
  assign(row: R, write: W): void;
  /** The row in write shape, to merge a PATCH into. */
  toWrite(row: R): W;
  toJson(row: R): Record<string, unknown>;
  /** Turns one CSV record (header -> cell; empty cells absent) into a write object for the schema. */
  fromCsv(cells: Readonly<Record<string, string>>): Record<string, unknown>;
}

export function parsePathId(kind: 'uuid' | 'int', raw: string, name = 'entity_id'): string | number | ValidationError[] {
  if (kind === 'int') {
    if (!/^\d{1,15}$/.test(raw)) {
      return [validationError(['path', name], 'Input should be a valid integer, unable to parse string as an integer', 'int_parsing', raw)];
    }
    return Number(raw);
  }
  const parsed = uuid.safeParse(raw);
  if (!parsed.success) {
    return [validationError(['path', name], 'Input should be a valid UUID', 'uuid_parsing', raw)];
  }
  return raw.toLowerCase();
}

const RECENT_SLOTS = 1024;

/** Interns low-cardinality strings (store ids, currencies) so a million rows share one copy of each. */
export class StringPool {
  readonly #pool = new Map<string, string>();
  readonly #max: number;
  /**
   * A direct-mapped cache in front of the map, indexed by the length and four characters (the last three and the
   * middle one: store ids are UUIDs, random at the end): a bulk row's store id is a fresh string, and hashing it
   * for the map cost more than comparing it with the one string in its slot.
   */
  readonly #recent: string[] = new Array<string>(RECENT_SLOTS).fill('');

  constructor(max = 100_000) {
    this.#max = max;
  }

  intern<T extends string | null | undefined>(value: T): T {
    if (typeof value !== 'string') return value;
    const n = value.length;
    const slot =
      n < 3
        ? n
        : (n * 31 + value.charCodeAt(n - 1) * 7 + value.charCodeAt(n - 2) * 131 + value.charCodeAt(n - 3) * 1031 + value.charCodeAt(n >> 1)) &
          (RECENT_SLOTS - 1);
    const recent = this.#recent[slot]!;
    if (recent === value) return recent as T;
    const known = this.#pool.get(value);
    if (known !== undefined) {
      this.#recent[slot] = known;
      return known as T;
    }
    if (this.#pool.size < this.#max) {
      this.#pool.set(value, value);
      this.#recent[slot] = value;
    }
    return value;
  }
}
