/**
 * The demo's configuration file: what a retail IT person would write for the four sample sources, pointed at the
 * in-process sandbox. It is loaded by the real loader (so the demo also proves the file is valid) and stays in the
 * demo folder, where `status` and `files` can read it afterwards.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEMO_SOURCES } from './sample-files.ts';

export interface DemoLayout {
  readonly dir: string;
  readonly configFile: string;
  readonly keyFile: string;
  readonly stateDir: string;
  readonly outboxDir: string;
  readonly logFile: string;
  /** Inbox folder per source name. */
  readonly inboxes: Readonly<Record<string, string>>;
}

export function demoLayout(dir: string): DemoLayout {
  const inbox = (name: string) => join(dir, 'inbox', name);
  return {
    dir,
    configFile: join(dir, 'pricing-agent.yaml'),
    keyFile: join(dir, 'api-key'),
    stateDir: join(dir, 'state'),
    outboxDir: join(dir, 'outbox'),
    logFile: join(dir, 'agent.log'),
    inboxes: Object.fromEntries(Object.values(DEMO_SOURCES).map((name) => [name, inbox(name)])),
  };
}

/** Rows per deliveries page: small, so that the demo's pull takes a few pages as a real one would. */
export const DEMO_PAGE_SIZE = 100;
/** How often the demo's daemon pulls and reconciles. */
export const DEMO_SCHEDULE = '*/2 * * * * *';

function configText(apiUrl: string): string {
  const s = DEMO_SOURCES;
  return `# Written by \`pricing-agent demo\`: four sources, the pull, per-store files, against the in-process sandbox.
# The sandbox is gone once the demo ends: read this folder with --offline, e.g.
#   pricing-agent status --offline --config pricing-agent.yaml
api:
  base_url: ${apiUrl}
  key_file: ./api-key
state:
  dir: ./state
log:
  level: info
sources:
  # A German ERP's products export: Windows-1252, semicolons, German headers.
  - name: ${s.products}
    entity: products
    path: ./inbox/${s.products}
    encoding: windows-1252
    delimiter: ";"
    columns:
      item_id: Artikelnummer
      sku: EAN
      product_name: Bezeichnung
      brand: Marke
      manufacturer: Hersteller
      product_type: Warengruppe
    # Unmapped columns (Grundpreis-Einheit, Gewicht kg) become custom columns.
  # The same ERP's store prices: decimal commas, thousands points, dates as DD.MM.YYYY.
  - name: ${s.storePrices}
    entity: product_store
    path: ./inbox/${s.storePrices}
    encoding: windows-1252
    delimiter: ";"
    decimal_separator: ","
    thousands_separator: "."
    date_format: DD.MM.YYYY
    columns:
      item_id: Artikelnummer
      store_id: Filiale
      store_name: Filialname
      current_price: Verkaufspreis
      regular_price: Normalpreis
      unit_cost: Einstandspreis
      stock_on_hand: Bestand
      tax_rate: MwSt
      price_effective_date: Gültig ab
    defaults:
      currency: EUR
      country_code: DE
  # POS transactions with the API's own column names, uploaded as an import job.
  - name: ${s.transactions}
    entity: transactions
    path: ./inbox/${s.transactions}
    mode: import
  - name: ${s.competitors}
    entity: competitor_prices
    path: ./inbox/${s.competitors}
pull:
  approved_prices:
    page_size: ${DEMO_PAGE_SIZE}
    # Every 2 seconds (cron with seconds), so that the demo sees the platform's changes at once. The defaults are
    # every minute for the pull and hourly for the reconciliation.
    schedule: "${DEMO_SCHEDULE}"
    reconcile:
      schedule: "${DEMO_SCHEDULE}"
outbox:
  exports:
    dir: ./outbox
    format: csv
http:
  host: 127.0.0.1
  # A free port: the demo must not collide with a real agent on 9464.
  port: 0
`;
}

/** Creates the folders, the key file (mode 600) and the config file. */
export async function writeDemoConfig(layout: DemoLayout, apiUrl: string, apiKey: string): Promise<void> {
  for (const inbox of Object.values(layout.inboxes)) await mkdir(inbox, { recursive: true, mode: 0o750 });
  await mkdir(layout.stateDir, { recursive: true, mode: 0o750 });
  await writeFile(layout.keyFile, `${apiKey}\n`, { mode: 0o600 });
  await chmod(layout.keyFile, 0o600);
  await writeFile(layout.configFile, configText(apiUrl), { mode: 0o640 });
}
