/**
 * The part of unzipper 0.10's API that xlsx-records.ts uses (the package ships no types): opening an archive by its
 * central directory and streaming one of its files.
 */
declare module 'unzipper' {
  import type { Readable } from 'node:stream';

  export interface File {
    readonly path: string;
    readonly type: 'File' | 'Directory';
    readonly uncompressedSize: number;
    readonly compressedSize: number;
    stream(password?: string): Readable;
  }

  export interface CentralDirectory {
    readonly files: File[];
  }

  export const Open: {
    file(path: string, options?: { tailSize?: number }): Promise<CentralDirectory>;
  };
}
