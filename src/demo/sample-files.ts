/**
 * The demo's sample drops, one per source, as the systems that make them would write them:
 *
 * - `Artikelstamm.csv`: a German ERP's products export: Windows-1252 (umlauts, €), semicolons, CRLF, German headers
 *   (mapped by `columns`), two extra columns that travel as custom columns;
 * - `Filialpreise.csv`: the same ERP's store prices: decimal commas, thousands points (1.299,00), dates as
 *   DD.MM.YYYY, the sandbox's store ids;
 * - `kassendaten.csv`: POS transactions with the API's own headers, UTF-8, sent as an import job, with one row
 *   whose timestamp is not a date (so the rejects CSV has something to show);
 * - `wettbewerb.csv`: competitor prices with the API's own headers.
 *
 * Deterministic: the same stores and the same day give the same bytes, and each file says how many rows it has
 * and how many the agent must accept and reject.
 */
import iconv from 'iconv-lite';

export interface SampleFile {
  /** The source (config name) whose inbox gets the file. */
  readonly source: string;
  readonly name: string;
  readonly content: Buffer;
  readonly expected: { readonly read: number; readonly accepted: number; readonly rejected: number };
}

export const DEMO_SOURCES = {
  products: 'erp-products',
  storePrices: 'erp-store-prices',
  transactions: 'pos-transactions',
  competitors: 'competitor-prices',
} as const;

const PRODUCTS: readonly (readonly [string, string, string])[] = [
  ['Käse Gouda mittelalt', 'Hofkäserei Böhm', 'Molkereiprodukte'],
  ['Bio-Äpfel Elstar', 'Obsthof Müller', 'Obst & Gemüse'],
  ['Süßkartoffeln', 'Gärtnerei Weiß', 'Obst & Gemüse'],
  ['Roggenbrötchen', 'Bäckerei Schäfer', 'Backwaren'],
  ['Grüner Veltliner', 'Weingut Strauß', 'Wein & Sekt'],
  ['Räucherlachs', 'Fischhaus Jürgens', 'Feinkost'],
  ['Spätzle', 'Mühle Häberle', 'Teigwaren'],
  ['Früchtemüsli', 'Kornkammer Öhringen', 'Frühstück'],
  ['Weißwurst', 'Metzgerei Huber', 'Fleisch & Wurst'],
  ['Geschenkkarte 25 €', 'Hausmarke', 'Gutscheine'],
  ['Kaffeevollautomat', 'Brühwerk', 'Elektro'],
  ['Glühwein', 'Weingut Strauß', 'Wein & Sekt'],
  ['Lebkuchen', 'Bäckerei Schäfer', 'Backwaren'],
  ['Sauerkraut', 'Gärtnerei Weiß', 'Konserven'],
  ['Maultaschen', 'Mühle Häberle', 'Teigwaren'],
  ['Apfelschorle', 'Obsthof Müller', 'Getränke'],
  ['Bergkäse', 'Hofkäserei Böhm', 'Molkereiprodukte'],
  ['Pfeffernüsse', 'Bäckerei Schäfer', 'Backwaren'],
  ['Rotkohl', 'Gärtnerei Weiß', 'Konserven'],
  ['Kräuterquark', 'Hofkäserei Böhm', 'Molkereiprodukte'],
];
const SIZES = ['klein', 'groß'] as const;
const STORE_NAMES = ['Köln Hbf', 'München Süd', 'Düsseldorf Altstadt', 'Nürnberg Plärrer', 'Lübeck Zentrum', 'Görlitz'];
const COMPETITORS = ['Markt Nord', 'Frischecke', 'Preisfuchs'];

export const DEMO_PRODUCT_COUNT = PRODUCTS.length * SIZES.length;

function itemId(i: number): string {
  return `A-${10001 + i}`;
}

/** Integer cents as a German decimal (1.299,00). */
function euroDe(cents: number): string {
  const whole = Math.floor(cents / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${whole},${String(cents % 100).padStart(2, '0')}`;
}

function euro(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/** The base price of product i in cents (the coffee machines cost more than 1000 €, for the thousands point). */
function priceCents(i: number): number {
  const base = PRODUCTS[Math.floor(i / 2)];
  return base?.[0] === 'Kaffeevollautomat' ? 129_900 + (i % 2) * 20_000 : 99 + ((i * 137) % 900);
}

function cp1252(lines: readonly string[]): Buffer {
  return iconv.encode(`${lines.join('\r\n')}\r\n`, 'windows-1252');
}

function utf8(lines: readonly string[]): Buffer {
  return Buffer.from(`${lines.join('\n')}\n`, 'utf8');
}

function productsFile(): SampleFile {
  const lines = ['Artikelnummer;EAN;Bezeichnung;Marke;Hersteller;Warengruppe;Status;Grundpreis-Einheit;Gewicht kg'];
  for (let i = 0; i < DEMO_PRODUCT_COUNT; i += 1) {
    const [name, brand, group] = PRODUCTS[Math.floor(i / 2)] ?? ['?', '?', '?'];
    const size = SIZES[i % 2] ?? '';
    const ean = `400638${String(100_000 + i * 7).padStart(7, '0')}`;
    lines.push([itemId(i), ean, `${name} ${size}`, brand, brand, group, 'aktiv', 'je kg', i % 2 === 0 ? '0,5' : '1,0'].join(';'));
  }
  return { source: DEMO_SOURCES.products, name: 'Artikelstamm.csv', content: cp1252(lines), expected: { read: DEMO_PRODUCT_COUNT, accepted: DEMO_PRODUCT_COUNT, rejected: 0 } };
}

function storePricesFile(stores: readonly string[], validFrom: string): SampleFile {
  const lines = ['Artikelnummer;Filiale;Filialname;Verkaufspreis;Normalpreis;Einstandspreis;Bestand;MwSt;Gültig ab'];
  stores.forEach((store, s) => {
    for (let i = 0; i < DEMO_PRODUCT_COUNT; i += 1) {
      const price = priceCents(i) + s * 10;
      const regular = i % 5 === 0 ? euroDe(price + 50) : '';
      const vat = PRODUCTS[Math.floor(i / 2)]?.[2] === 'Elektro' ? '19,00' : '7,00';
      lines.push([itemId(i), store, STORE_NAMES[s] ?? `Filiale ${s + 1}`, euroDe(price), regular, euroDe(Math.round(price * 0.6)), String((i * 13 + s) % 80), vat, validFrom].join(';'));
    }
  });
  const n = stores.length * DEMO_PRODUCT_COUNT;
  return { source: DEMO_SOURCES.storePrices, name: 'Filialpreise.csv', content: cp1252(lines), expected: { read: n, accepted: n, rejected: 0 } };
}

export const DEMO_TRANSACTIONS = 300;

function transactionsFile(stores: readonly string[], today: Date): SampleFile {
  const lines = ['transaction_id,item_id,transaction_timestamp,store_id,quantity,price,revenue,currency,is_promo'];
  for (let t = 0; t < DEMO_TRANSACTIONS; t += 1) {
    const i = (t * 7) % DEMO_PRODUCT_COUNT;
    const at = new Date(today.getTime() - (1 + (t % 7)) * 86_400_000 + (t % 600) * 60_000).toISOString();
    const quantity = 1 + (t % 3);
    const price = priceCents(i);
    lines.push([`T-${100_000 + t}`, itemId(i), at, stores[t % stores.length] ?? '', String(quantity), euro(price), euro(price * quantity), 'EUR', t % 10 === 0 ? 'true' : 'false'].join(','));
    // One row a till wrote wrongly: its timestamp is no date. It lands in the rejects CSV with its line number.
    if (t === 41) lines.push(`T-BAD-1,${itemId(i)},gestern 17:30,${stores[0] ?? ''},1,${euro(price)},${euro(price)},EUR,false`);
  }
  return { source: DEMO_SOURCES.transactions, name: 'kassendaten.csv', content: utf8(lines), expected: { read: DEMO_TRANSACTIONS + 1, accepted: DEMO_TRANSACTIONS, rejected: 1 } };
}

function competitorFile(today: Date): SampleFile {
  const lines = ['competitor_name,item_id,observed_at,regular_price,effective_price,promo_price,currency,source_url'];
  const observed = new Date(today.getTime() - 86_400_000).toISOString();
  let n = 0;
  for (const [c, competitor] of COMPETITORS.entries()) {
    for (let i = 0; i < 20; i += 1) {
      const regular = priceCents(i) + 20 - c * 15;
      const promo = (i + c) % 6 === 0 ? regular - 30 : null;
      const url = `https://${competitor.toLowerCase().replace(/\s+/g, '-')}.example/artikel/${itemId(i)}`;
      lines.push([competitor, itemId(i), observed, euro(regular), euro(promo ?? regular), promo === null ? '' : euro(promo), 'EUR', url].join(','));
      n += 1;
    }
  }
  return { source: DEMO_SOURCES.competitors, name: 'wettbewerb.csv', content: utf8(lines), expected: { read: n, accepted: n, rejected: 0 } };
}

/** The four files; `stores` are the sandbox's store ids (store prices use the first six). */
export function sampleFiles(stores: readonly string[], today: Date): SampleFile[] {
  const used = stores.slice(0, STORE_NAMES.length);
  const d = today;
  const validFrom = `${String(d.getDate()).padStart(2, '0')}.${String(d.getMonth() + 1).padStart(2, '0')}.${d.getFullYear()}`;
  return [productsFile(), storePricesFile(used, validFrom), transactionsFile(used, today), competitorFile(today)];
}
