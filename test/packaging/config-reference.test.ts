/**
 * config.example.yaml is the configuration reference the README links. For the sections of the deployment
 * (api, state, log, http, daemon, feed, ha), every key of the schema, nested ones included, must appear in the example's
 * section, set or commented out, right below a comment that explains it. (test/config/example.test.ts checks the
 * top-level keys of every section; the owners of pull, outbox and sources check theirs.)
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { configSchema } from '../../src/config/schema.ts';
import { readRepoFile } from './support.ts';

const SECTIONS = ['api', 'state', 'log', 'http', 'daemon', 'feed', 'ha'] as const;

interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  items?: JsonSchema;
}

/** Every key path of the schema's input side ("api.key_file"; "[]" for list items). */
function keyPaths(schema: JsonSchema, prefix: string, out: Set<string>): Set<string> {
  for (const [key, value] of Object.entries(schema.properties ?? {})) {
    out.add(`${prefix}${key}`);
    keyPaths(value, `${prefix}${key}.`, out);
  }
  for (const alternative of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) keyPaths(alternative, prefix, out);
  if (schema.items) keyPaths(schema.items, `${prefix}[].`, out);
  return out;
}

const schema = z.toJSONSchema(configSchema({ baseDir: '/', env: {}, warn: () => undefined }), {
  io: 'input',
  unrepresentable: 'any',
}) as JsonSchema;
const paths = [...keyPaths(schema, '', new Set())];
const lines = readRepoFile('config.example.yaml').split('\n');

/** The lines of a top-level section, from `section:` to the next top-level key or commented-out top-level key. */
function sectionLines(section: string): string[] {
  const start = lines.findIndex((l) => l === `${section}:`);
  if (start === -1) return [];
  const end = lines.findIndex((l, i) => i > start && /^#?[a-z_]+:/.test(l));
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

describe('config.example.yaml documents every key of the deployment sections', () => {
  for (const section of SECTIONS) {
    it(section, () => {
      const block = sectionLines(section);
      expect(block.length, `${section}: is missing`).toBeGreaterThan(0);
      const keys = paths.filter((p) => p.startsWith(`${section}.`)).map((p) => p.split('.').at(-1) ?? '');
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        const at = block.findIndex((l) => new RegExp(`^\\s*(#\\s*)?${key}:`).test(l));
        expect(at, `${section}.${key} is not in the example`).toBeGreaterThanOrEqual(0);
        const above = block.slice(0, at).filter((l) => l.trim() !== '').at(-1) ?? '';
        expect(above.trimStart().startsWith('#'), `${section}.${key} has no comment above it`).toBe(true);
      }
    });
  }
});
