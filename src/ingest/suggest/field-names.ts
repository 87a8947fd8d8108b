/**
 * The names real exports give each API field, in the languages of the exports seen so far (English, German, French,
 * Dutch, Spanish, Italian, Polish, Czech, Croatian, Swedish), for `sources suggest`: a header cell is matched after
 * `normalizeName` (lower case, accents and punctuation gone), exactly first, then as a word inside a longer name
 * ("Preis inkl. MwSt" names a price). A name may stand for several fields; the column's values and the entity decide.
 */

/** "Gültig ab" -> "gultig ab"; "Unit_Price" and "UnitPrice" -> "unit price". */
export function normalizeName(name: string): string {
  return name
    .replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2') // SpecialPrice, InvoiceNo: words of their own
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

const NAMES: Readonly<Record<string, readonly string[]>> = {
  item_id: [
    'item id', 'item', 'item no', 'item number', 'article', 'article no', 'article number', 'artikel', 'artikelnummer', 'artikel nr',
    'artnr', 'art nr', 'stockcode', 'stock code', 'product code', 'productcode', 'code', 'plu', 'sifra', 'sifra proizvoda', 'id artikla',
    'reference', 'ref', 'referencia', 'codice', 'codice articolo', 'kod', 'kod produktu', 'artikelnr', 'materialnummer', 'id',
    'productid', 'product id', 'itemid', 'articleid', 'handle',
  ],
  sku: ['sku', 'variant sku', 'artikelnummer lieferant', 'ean', 'gtin', 'barcode', 'upc'],
  product_name: [
    'product name', 'name', 'title', 'description', 'product', 'bezeichnung', 'artikelbezeichnung', 'artikelname', 'produkt', 'naziv',
    'naziv proizvoda', 'libelle', 'designation', 'nom', 'omschrijving', 'descripcion', 'nombre', 'descrizione', 'nazwa', 'nazev', 'benamning',
  ],
  brand: ['brand', 'marke', 'marque', 'merk', 'marca', 'marka', 'vendor', 'hersteller marke'],
  manufacturer: ['manufacturer', 'hersteller', 'fabricant', 'producent', 'fabricante', 'proizvodac', 'vyrobce'],
  product_type: ['product type', 'type', 'category', 'kategorie', 'warengruppe', 'categorie', 'categoria', 'kategorija', 'kategoria'],
  status: ['status', 'state', 'published', 'active'],
  store_id: [
    'store id', 'store', 'shop', 'branch', 'location', 'filiale', 'filialnummer', 'markt', 'magasin', 'winkel', 'tienda', 'negozio',
    'sklep', 'prodavaonica', 'poslovnica', 'butik', 'store no', 'store number', 'site',
  ],
  store_name: ['store name', 'filialname', 'shop name', 'location name', 'nom du magasin'],
  current_price: [
    'price', 'current price', 'sales price', 'sale price', 'selling price', 'retail price', 'unit price', 'unitprice', 'preis', 'vk',
    'vk preis', 'verkaufspreis', 'prix', 'prix de vente', 'prijs', 'verkoopprijs', 'precio', 'prezzo', 'cena', 'cijena', 'mpc',
    'maloprodajna cijena', 'pris', 'regular price', 'special price', 'akcijska cijena', 'promo price',
  ],
  // A plain "price" is the regular price only where no field takes it first (required fields are mapped first:
  // product_store's current_price takes it there; a competitor's list has no other).
  regular_price: ['regular price', 'list price', 'listenpreis', 'uvp', 'rrp', 'msrp', 'prix catalogue', 'old price', 'was price', 'price', 'preis', 'prix', 'precio', 'prezzo', 'cena', 'cijena'],
  unit_cost: ['unit cost', 'cost', 'cost price', 'einkaufspreis', 'ek', 'ek preis', 'prix d achat', 'inkoopprijs', 'nabavna cijena'],
  stock_on_hand: ['stock', 'stock on hand', 'on hand', 'qty on hand', 'bestand', 'lagerbestand', 'inventory', 'zaliha', 'stock quantity'],
  tax_rate: ['tax rate', 'vat', 'vat rate', 'tax', 'mwst', 'ust', 'tva', 'btw', 'iva', 'pdv'],
  currency: ['currency', 'curr', 'wahrung', 'devise', 'valuta', 'moneda', 'waluta', 'mena'],
  price_effective_date: ['effective date', 'valid from', 'gultig ab', 'gueltig ab', 'date', 'datum', 'price date', 'from date', 'vrijedi od'],
  transaction_id: [
    'transaction id', 'transaction', 'receipt', 'receipt no', 'receipt number', 'ticket', 'ticket no', 'bon', 'bonnummer', 'beleg',
    'belegnummer', 'invoice', 'invoiceno', 'invoice no', 'invoice number', 'order', 'order id', 'order number', 'racun', 'broj racuna', 'kassenbon',
  ],
  transaction_timestamp: [
    'transaction timestamp', 'timestamp', 'date', 'datetime', 'time', 'invoicedate', 'invoice date', 'order date', 'datum', 'zeit',
    'uhrzeit', 'date heure', 'fecha', 'data', 'sold at', 'sale date', 'buchungsdatum',
  ],
  quantity: ['quantity', 'qty', 'menge', 'anzahl', 'stuck', 'quantite', 'aantal', 'cantidad', 'quantita', 'ilosc', 'kolicina', 'units'],
  price: ['price', 'unit price', 'unitprice', 'preis', 'einzelpreis', 'prix', 'prix unitaire', 'prijs', 'precio', 'prezzo', 'cena', 'cijena'],
  revenue: ['revenue', 'amount', 'total', 'line total', 'umsatz', 'betrag', 'summe', 'montant', 'bedrag', 'importe', 'iznos', 'net sales'],
  is_promo: ['is promo', 'promo', 'promotion', 'aktion', 'on sale', 'akcija'],
  competitor_name: ['competitor', 'competitor name', 'retailer', 'shop name', 'seller', 'merchant', 'wettbewerber', 'konkurrent', 'concurrent', 'supermercado', 'supermarket', 'chain', 'cadena', 'enseigne'],
  observed_at: ['observed at', 'observed', 'scraped at', 'checked at', 'date', 'timestamp', 'crawl date', 'datum', 'erfasst am'],
  effective_price: ['effective price', 'price', 'current price', 'sale price', 'preis', 'prix', 'cena', 'cijena'],
  promo_price: ['promo price', 'sale price', 'special price', 'aktionspreis', 'akcijska cijena', 'prix promo'],
  source_url: ['url', 'source url', 'link', 'product url', 'enlace'],
  competitor_sku: ['competitor sku', 'their sku', 'competitor item'],
  barcode: ['barcode', 'ean', 'gtin', 'upc', 'ean13', 'barkod'],
};

/** How well a header names a field: 2 an exact name, 1 a name as a whole word inside it, 0 not at all. */
export function nameScore(field: string, header: string): number {
  const names = NAMES[field];
  if (names === undefined) return 0;
  const cell = normalizeName(header);
  if (cell === '') return 0;
  if (cell === normalizeName(field) || names.includes(cell)) return 2;
  const words = ` ${cell} `;
  return names.some((n) => n.length >= 3 && words.includes(` ${n} `)) ? 1 : 0;
}

/** Whether a header cell names any field this module knows (header-row detection). */
export function namesAnyField(header: string): boolean {
  return Object.keys(NAMES).some((field) => nameScore(field, header) > 0);
}
