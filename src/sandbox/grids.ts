/**
 * Seeded grids: user-built workspaces with canonical, custom and formula columns (types string, number,
 * single_select). Rows are not stored: row N of a grid is computed from (seed, grid, N) whenever it is read, so the
 * large grid (60,000 rows by default, for paging tests) costs no memory and every run with the same seed shows the
 * same rows.
 *
 * Choices (docs/sandbox.md): rows are ordered by their number (1..row_count) and the cursor is the last row number;
 * a row carries exactly the keys of the selected columns, as the document says ("keyed by column name"): nothing
 * else, so a mirror cannot rely on a row id or an update time unless the grid has columns for them. Two of the
 * seeded grids do: canonical columns named `grid_item_id` (the row number) and `updated_at`; the others have
 * neither. Numeric values are decimal strings; a column name in `columns` that the grid does not have is a 422 on
 * ['query', 'columns']; an unknown grid_id is 404.
 */
import type { GridColumn } from '../api/schemas/index.ts';
import { centsToDecimal, Prng } from './prng.ts';

type Cell = string | null;

export interface GridDef {
  readonly grid_id: string;
  readonly name: string;
  readonly columns: readonly GridColumn[];
  readonly row_count: number;
  readonly updated_at: string;
  /** Position in the catalog; part of the row seed. */
  readonly index: number;
}

const col = (name: string, type: string, source: string): GridColumn => ({ name, type, source });

const ALL_COLUMNS = {
  grid_item_id: col('grid_item_id', 'number', 'canonical'),
  updated_at: col('updated_at', 'string', 'canonical'),
  item_id: col('item_id', 'string', 'canonical'),
  sku: col('sku', 'string', 'canonical'),
  product_name: col('product_name', 'string', 'canonical'),
  brand: col('brand', 'string', 'canonical'),
  current_price: col('current_price', 'number', 'canonical'),
  unit_cost: col('unit_cost', 'number', 'canonical'),
  price_zone: col('Price Zone', 'single_select', 'custom'),
  buyer_note: col('Buyer Note', 'string', 'custom'),
  promo_type: col('Promo Type', 'single_select', 'custom'),
  margin: col('Margin %', 'number', 'formula'),
  suggested: col('Suggested Price', 'number', 'formula'),
} as const;

const C = ALL_COLUMNS;
const LAYOUTS: readonly { name: string; rows: number; columns: readonly GridColumn[] }[] = [
  {
    name: 'Weekly price review',
    rows: 250,
    columns: [
      C.grid_item_id,
      C.item_id,
      C.sku,
      C.product_name,
      C.brand,
      C.current_price,
      C.unit_cost,
      C.price_zone,
      C.buyer_note,
      C.margin,
      C.suggested,
      C.updated_at,
    ],
  },
  { name: 'Promo planning', rows: 1200, columns: [C.item_id, C.sku, C.product_name, C.current_price, C.promo_type, C.suggested] },
  { name: 'Competitive watch', rows: 40, columns: [C.item_id, C.product_name, C.current_price, C.price_zone, C.margin] },
];
const LARGE_LAYOUT = {
  name: 'Full assortment',
  columns: [C.grid_item_id, C.item_id, C.sku, C.product_name, C.current_price, C.unit_cost, C.margin, C.updated_at],
};

const NOUNS = ['Apple Juice', 'Coffee Beans', 'Pasta', 'Olive Oil', 'Dish Soap', 'Yoghurt', 'Rice', 'Tea', 'Cereal', 'Shampoo'];
const SIZES = ['250g', '500g', '1kg', '1L', '750ml', '6-pack'];
const BRANDS = ['Nordhof', 'Casa Verde', 'Bluepeak', 'Maison Lune', 'Trailmix Co'];
const ZONES = ['A', 'B', 'C'];
const PROMOS = ['None', 'BOGO', '10% off', 'Bundle'];
const NOTES = ['Check competitor', 'Seasonal', 'Delisting candidate', 'Hold price'];

/** The catalog's item codes, shared with the approvals generator so approvals point at real grid rows. */
export function itemCode(n: number): string {
  return `ITM-${String(n).padStart(6, '0')}`;
}

export class GridCatalog {
  readonly grids: readonly GridDef[];
  readonly #seed: number;
  readonly #epoch: number;

  constructor(seed: number, epoch: number, largeRows: number, data: Prng) {
    this.#seed = seed;
    this.#epoch = epoch;
    const layouts = largeRows > 0 ? [...LAYOUTS, { ...LARGE_LAYOUT, rows: largeRows }] : LAYOUTS;
    this.grids = layouts.map((layout, index) => ({
      grid_id: data.uuid(),
      name: layout.name,
      columns: layout.columns,
      row_count: layout.rows,
      updated_at: new Date(epoch - 3_600_000).toISOString(),
      index,
    }));
  }

  byId(id: string): GridDef | undefined {
    return this.grids.find((grid) => grid.grid_id === id);
  }

  /** The full row N (1-based), every column the generator knows, keyed by column name. */
  row(grid: GridDef, n: number): { updatedAt: number; cells: Readonly<Record<string, Cell>> } {
    const prng = new Prng((Math.imul(this.#seed, 1_000_003) + n) | 0, 100 + grid.index);
    const price = prng.int(99, 9999);
    const cost = Math.round((price * prng.int(45, 85)) / 100);
    const marginBasisPoints = Math.round(((price - cost) * 10_000) / price);
    const cells: Record<string, Cell> = {
      item_id: itemCode(n),
      sku: String(100000 + n),
      product_name: `${prng.pick(NOUNS)} ${prng.pick(SIZES)}`,
      brand: prng.pick(BRANDS),
      current_price: centsToDecimal(price),
      unit_cost: centsToDecimal(cost),
      'Price Zone': prng.pick(ZONES),
      'Buyer Note': prng.chance(0.3) ? prng.pick(NOTES) : null,
      'Promo Type': prng.pick(PROMOS),
      'Margin %': centsToDecimal(marginBasisPoints),
      'Suggested Price': centsToDecimal(Math.round((price * 105) / 100)),
    };
    // Up to 30 days before the grid's own update time, to the millisecond.
    const updatedAt = this.#epoch - 3_600_000 - prng.int(0, 30 * 86_400) * 1000 - prng.int(0, 999);
    cells.grid_item_id = String(n);
    cells.updated_at = new Date(updatedAt).toISOString();
    return { updatedAt, cells };
  }
}
