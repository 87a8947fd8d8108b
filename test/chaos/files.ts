/**
 * The files the chaos run drops into the four inboxes, and what must become of every row of them.
 *
 * Every valid row has a business key no other file uses, so "present in the sandbox exactly once" is a plain set
 * comparison. Every invalid row carries a marker (`BAD...`) in its business key: it must appear in its file's
 * rejects CSV at its line and never in the sandbox. The products source reads Windows-1252 with `;` and German
 * headers (an ERP export); the others are UTF-8, some with a byte-order mark.
 */
import iconv from 'iconv-lite';
import type { Prng } from '../../src/sandbox/prng.ts';

export const CHAOS_ENTITIES = ['products', 'product_store', 'transactions', 'competitor_prices'] as const;
export type ChaosEntity = (typeof CHAOS_ENTITIES)[number];

/** Source (and inbox folder) name per entity: the daemon harness's four inboxes. */
export const SOURCE_OF: Record<ChaosEntity, string> = {
  products: 'products',
  product_store: 'stores',
  transactions: 'tx',
  competitor_prices: 'competitors',
};

/** A store id that is not one of the sandbox's stores: the API refuses the row (unknown_store). */
export const UNKNOWN_STORE = '00000000-0000-4000-8000-00000000dead';

export interface InvalidRow {
  /** 1-based line in the file (the header is line 1). */
  readonly line: number;
  /** A value of the row found in its rejects line, and never in the sandbox. */
  readonly marker: string;
  /** Who refuses it: the agent (local validation) or the API (unknown store). */
  readonly stage: 'local' | 'api';
}

export interface ChaosFile {
  readonly name: string;
  readonly entity: ChaosEntity;
  readonly source: string;
  readonly bytes: Buffer;
  readonly rows: number;
  /** Business keys of the valid rows (see `keyOf*` for the form per entity). */
  readonly validKeys: readonly string[];
  /** The text of each valid row, in the order of validKeys: the version of its key the file carries. */
  readonly validRows: readonly string[];
  readonly invalid: readonly InvalidRow[];
  readonly encoding: 'windows-1252' | 'utf-8' | 'utf-8-bom';
}

/** A decimal string from an integer: no float ever makes a price. */
function price(i: number): string {
  return `${1 + (i % 40)}.${String((i * 7) % 100).padStart(2, '0')}`;
}

function stamp(i: number): string {
  return `2026-11-20T${String(8 + (i % 10)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00Z`;
}

export function competitorKey(k: { competitor_name: string; item_id: string | null; competitor_sku: string | null; observed_at: string }): string {
  return `${k.competitor_name}|${k.item_id ?? ''}|${k.competitor_sku ?? ''}|${k.observed_at}`;
}

export function productStoreKey(k: { item_id: string; store_id: string | null }): string {
  return `${k.item_id}|${k.store_id ?? ''}`;
}

interface Built {
  header: string;
  lines: string[];
  validKeys: string[];
  validRows: string[];
  invalid: InvalidRow[];
}

/**
 * One file of `rows` rows; `badShare` of them invalid (at least one when > 0). `n` makes its keys unique.
 */
export function buildFile(entity: ChaosEntity, n: number, rows: number, badShare: number, stores: readonly string[], rng: Prng): ChaosFile {
  const built: Built = { header: '', lines: [], validKeys: [], validRows: [], invalid: [] };
  const bad = new Set<number>();
  if (badShare > 0) {
    const count = Math.max(1, Math.round(rows * badShare));
    while (bad.size < Math.min(count, rows)) bad.add(rng.int(0, rows - 1));
  }
  const store = (j: number) => stores[j % stores.length] ?? '';
  for (let j = 0; j < rows; j += 1) {
    const line = j + 2;
    const isBad = bad.has(j);
    const validBefore = built.validKeys.length;
    switch (entity) {
      case 'products': {
        built.header = 'Artikelnummer;Bezeichnung;Marke';
        if (isBad) {
          const marker = `BADP${n}-${j}`;
          built.lines.push(`${marker};${'ä'.repeat(1001)};X`); // product_name over 1000 characters
          built.invalid.push({ line, marker, stage: 'local' });
        } else {
          const key = `P${n}-${j}`;
          built.lines.push(`${key};Käse €${j} Blütenhonig;Müller`);
          built.validKeys.push(key);
        }
        break;
      }
      case 'product_store': {
        built.header = 'item_id,store_id,current_price,stock_on_hand';
        if (isBad && j % 2 === 0) {
          const marker = `BADS${n}-${j}`;
          built.lines.push(`${marker},${store(j)},12.34.56,1`); // not a decimal
          built.invalid.push({ line, marker, stage: 'local' });
        } else if (isBad) {
          const marker = `BADU${n}-${j}`;
          built.lines.push(`${marker},${UNKNOWN_STORE},1.00,1`);
          built.invalid.push({ line, marker, stage: 'api' });
        } else {
          // A nightly export of one assortment (delta push): the same keys in every file, a tenth of the prices
          // changed from one file to the next, the rest unchanged.
          const item = `S-${j}`;
          built.lines.push(`${item},${store(j)},${price(j % 10 === 0 ? j + n : j)},${j}`);
          built.validKeys.push(productStoreKey({ item_id: item, store_id: store(j) }));
        }
        break;
      }
      case 'transactions': {
        built.header = 'transaction_id,item_id,transaction_timestamp,store_id,quantity,price,currency';
        if (isBad) {
          const marker = `BADT${n}-${j}`;
          built.lines.push(`${marker},ITEM-${j % 97},not-a-date,${store(j)},1,${price(j)},EUR`);
          built.invalid.push({ line, marker, stage: 'local' });
        } else {
          const key = `T${n}-${j}`;
          built.lines.push(`${key},ITEM-${j % 97},${stamp(j)},${store(j)},${1 + (j % 3)},${price(j)},EUR`);
          built.validKeys.push(key);
        }
        break;
      }
      case 'competitor_prices': {
        built.header = 'competitor_name,item_id,observed_at,regular_price,effective_price,currency';
        const competitor = ['Aldi', 'Lidl', 'Rewe', 'Edeka'][j % 4] ?? 'Aldi';
        if (isBad) {
          const marker = `BADC${n}-${j}`;
          built.lines.push(`${competitor},${marker},${stamp(j)},abc,${price(j)},EUR`);
          built.invalid.push({ line, marker, stage: 'local' });
        } else {
          const item = `C${n}-${j}`;
          built.lines.push(`${competitor},${item},${stamp(j)},${price(j + 3)},${price(j)},EUR`);
          built.validKeys.push(competitorKey({ competitor_name: competitor, item_id: item, competitor_sku: null, observed_at: stamp(j) }));
        }
        break;
      }
    }
    if (built.validKeys.length > validBefore) built.validRows.push(built.lines.at(-1) ?? '');
  }
  const text = `${built.header}\n${built.lines.join('\n')}\n`;
  let encoding: ChaosFile['encoding'] = 'utf-8';
  let bytes: Buffer;
  if (entity === 'products') {
    encoding = 'windows-1252';
    bytes = iconv.encode(text.replaceAll('\n', '\r\n'), 'windows-1252');
  } else if (rng.chance(0.3)) {
    encoding = 'utf-8-bom';
    bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]);
  } else bytes = Buffer.from(text, 'utf8');
  const name = `${SOURCE_OF[entity]}-${String(n).padStart(4, '0')}.csv`;
  return { name, entity, source: SOURCE_OF[entity], bytes, rows, validKeys: built.validKeys, validRows: built.validRows, invalid: built.invalid, encoding };
}

/** The source blocks of the chaos config (YAML), one per entity. */
export function sourcesYaml(options: { txMode: 'bulk' | 'import' }): string {
  return [
    '  - name: products\n    entity: products\n    path: ./inbox/products\n    stable_ms: 300\n    delimiter: ";"\n',
    '    encoding: windows-1252\n    batch_size: 40\n',
    '    columns: { item_id: Artikelnummer, sku: Artikelnummer, product_name: Bezeichnung, brand: Marke }\n',
    // Delta sources (the default for products and product_store), without brakes: the drops are unrelated files,
    // each one would "change" most of the keys the one before left.
    '    brakes: false\n',
    '  - name: stores\n    entity: product_store\n    path: ./inbox/stores\n    stable_ms: 300\n    batch_size: 40\n    brakes: false\n',
    `  - name: tx\n    entity: transactions\n    path: ./inbox/tx\n    stable_ms: 300\n    batch_size: 60\n    mode: ${options.txMode}\n`,
    '  - name: competitors\n    entity: competitor_prices\n    path: ./inbox/competitors\n    stable_ms: 300\n    batch_size: 40\n',
  ].join('');
}
