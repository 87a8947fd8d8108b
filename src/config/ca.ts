/**
 * Extra CA certificates (`api.ca_file`): a PEM file with one or more certificates, for networks that inspect TLS
 * with their own authority or an API behind a private CA. They are added to Node's default roots (the bundled
 * Mozilla store, plus NODE_EXTRA_CA_CERTS and the system store when Node runs with --use-system-ca), never
 * replacing them.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { getCACertificates } from 'node:tls';

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

export type CaFileResult =
  | { readonly ok: true; readonly certificates: readonly string[] }
  | { readonly ok: false; readonly message: string };

/** Splits PEM text into certificates and checks each one parses; a message for a person when not. */
export function parseCaPem(file: string, text: string): CaFileResult {
  const blocks = text.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) {
    return { ok: false, message: `${file} contains no PEM certificate (-----BEGIN CERTIFICATE-----)` };
  }
  for (const [index, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch {
      return { ok: false, message: `${file}: certificate ${index + 1} of ${blocks.length} is not valid PEM` };
    }
  }
  return { ok: true, certificates: blocks };
}

/** Reads and checks a CA file at load time, so a wrong path is a config error, not a TLS failure later. */
export async function readCaFile(file: string): Promise<CaFileResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, message: `cannot read ${file} (${code === 'ENOENT' ? 'no such file' : (code ?? 'error')})` };
  }
  return parseCaPem(file, text);
}

/**
 * The `ca` option for the HTTP layer's TLS connections: Node's default roots plus the certificates of
 * `api.ca_file`, or undefined (use Node's defaults untouched) when no file is configured. Reads the file
 * synchronously: it is called once when the dispatcher is built. Throws when the file became unreadable or
 * invalid since the config was loaded.
 */
export function caCertificates(api: { readonly ca_file: string | null }): string[] | undefined {
  if (api.ca_file === null) return undefined;
  const result = parseCaPem(api.ca_file, readFileSync(api.ca_file, 'utf8'));
  if (!result.ok) throw new Error(`api.ca_file: ${result.message}`);
  return [...getCACertificates('default'), ...result.certificates];
}
