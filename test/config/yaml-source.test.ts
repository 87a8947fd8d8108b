/** Mapping a YAML path to the line a person should look at, including inside lists (`sources[1].encoding`). */
import { describe, expect, it } from 'vitest';
import { formatPath, formatProblem } from '../../src/config/errors.ts';
import { lineOf, problemAt, readYamlSource } from '../../src/config/yaml-source.ts';
import { writeConfig } from './support.ts';

const TEXT = [
  'sources:', //                       1
  '  - name: erp-products', //         2
  '    encoding: utf-8', //              3
  '  - name: competitor-feed', //      4
  '    encoding: ebcdic', //             5
  '    columns:', //                   6
  '      sku: item_id', //             7
  '    defaults:', //                  8
  'empty:', //                         9
  'nested:', //                        10
  '  list:', //                        11
  '    - 1', //                        12
  '    - 2', //                        13
].join('\n');

describe('lineOf', () => {
  it('finds values inside lists of mappings', async () => {
    const source = await readYamlSource(writeConfig(TEXT));
    expect(lineOf(source, ['sources', 1, 'encoding'])).toBe(5);
    expect(lineOf(source, ['sources', 1, 'columns', 'sku'])).toBe(7);
    expect(lineOf(source, ['nested', 'list', 1])).toBe(13);
  });

  it('points a mapping, a list or an empty value at its key', async () => {
    const source = await readYamlSource(writeConfig(TEXT));
    expect(lineOf(source, ['sources', 1, 'columns'])).toBe(6);
    expect(lineOf(source, ['sources', 1, 'defaults'])).toBe(8);
    expect(lineOf(source, ['empty'])).toBe(9);
    expect(lineOf(source, ['sources'])).toBe(1);
    expect(lineOf(source, ['sources', 1])).toBe(4);
  });

  it('points a missing key at its parent, and has no line for a missing top-level key', async () => {
    const source = await readYamlSource(writeConfig(TEXT));
    expect(lineOf(source, ['sources', 1, 'path'])).toBe(4);
    expect(lineOf(source, ['sources', 0, 'columns', 'x'])).toBe(2);
    expect(lineOf(source, ['sources', 7, 'name'])).toBe(1);
    expect(lineOf(source, ['api'])).toBeUndefined();
  });

  it('formats a problem as the issue asks: sources[1].encoding: ... (line 5)', async () => {
    const source = await readYamlSource(writeConfig(TEXT));
    const problem = problemAt(source, ['sources', 1, 'encoding'], 'expected one of utf-8, utf-16le');
    expect(formatProblem(problem)).toBe('sources[1].encoding: expected one of utf-8, utf-16le (line 5)');
    expect(formatPath(['columns', 'Artikel Nr.'])).toBe('columns["Artikel Nr."]');
  });
});
