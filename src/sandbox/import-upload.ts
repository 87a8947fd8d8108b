/**
 * Receives the CSV of `POST /v1/imports/{entity}`: a multipart/form-data body whose part named `file` holds the CSV
 * (busboy parses the multipart; other parts are drained and ignored). The upload is streamed: every chunk is checked
 * for UTF-8 on the fly (a streaming fatal TextDecoder) and kept once, as received, for the job to parse; nothing
 * else of the file is held.
 *
 * The spec's four 422 causes, all with loc ['body', 'file']: no `file` part (type missing), an empty file (0 bytes,
 * or only a byte-order mark), a file that is not UTF-8, a file whose first line is blank (no header row).
 */
import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import type { ValidationError } from '../api/schemas/index.ts';
import { validationError } from './http-io.ts';

export interface CsvUpload {
  readonly chunks: Buffer[];
  readonly bytes: number;
}

/** Enough to decide whether the first line holds something; a longer first line is a header. */
const HEADER_PROBE_CHARS = 64 * 1024;

const fileError = (msg: string, type = 'value_error'): ValidationError[] => [validationError(['body', 'file'], msg, type)];

class CsvProbe {
  readonly chunks: Buffer[] = [];
  bytes = 0;
  #decoder = new TextDecoder('utf-8', { fatal: true });
  #utf8 = true;
  #chars = 0;
  #firstLine = '';
  #firstLineDone = false;

  push(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (!this.#utf8) return; // keep draining, hold nothing
    try {
      this.#see(this.#decoder.decode(chunk, { stream: true }));
      this.chunks.push(chunk);
    } catch {
      this.#fail();
    }
  }

  finish(): ValidationError[] | null {
    if (this.#utf8) {
      try {
        this.#see(this.#decoder.decode());
      } catch {
        this.#fail();
      }
    }
    if (this.bytes === 0) return fileError('Value error, the file is empty');
    if (!this.#utf8) return fileError('Value error, the file is not valid UTF-8');
    if (this.#chars === 0) return fileError('Value error, the file is empty');
    if (this.#firstLine.trim() === '') return fileError('Value error, the file has no header row');
    return null;
  }

  #see(text: string): void {
    let rest = text;
    if (this.#chars === 0 && rest.startsWith('\uFEFF')) rest = rest.slice(1); // byte-order mark
    this.#chars += rest.length;
    if (this.#firstLineDone || rest.length === 0) return;
    const newline = rest.indexOf('\n');
    this.#firstLine += newline < 0 ? rest : rest.slice(0, newline);
    if (newline >= 0 || this.#firstLine.length >= HEADER_PROBE_CHARS) this.#firstLineDone = true;
  }

  #fail(): void {
    this.#utf8 = false;
    this.chunks.length = 0;
  }
}

/** Reads the multipart body to its end; resolves with the file or the 422 errors. */
export function receiveCsv(req: IncomingMessage): Promise<CsvUpload | ValidationError[]> {
  return new Promise((resolve) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers });
    } catch {
      req.resume();
      req.on('end', () => resolve(fileError('Field required', 'missing')));
      return;
    }
    let probe: CsvProbe | null = null;
    parser.on('file', (name, stream) => {
      if (name !== 'file' || probe !== null) {
        stream.resume();
        return;
      }
      const current = new CsvProbe();
      probe = current;
      stream.on('data', (chunk: Buffer) => current.push(chunk));
    });
    parser.on('close', () => {
      const received: CsvProbe | null = probe;
      if (received === null) {
        resolve(fileError('Field required', 'missing'));
        return;
      }
      const errors = received.finish();
      resolve(errors ?? { chunks: received.chunks, bytes: received.bytes });
    });
    parser.on('error', (error: unknown) => {
      req.unpipe(parser);
      req.resume();
      const msg = error instanceof Error ? error.message : 'malformed multipart body';
      resolve([validationError(['body'], `Value error, ${msg}`, 'value_error')]);
    });
    req.pipe(parser);
  });
}
