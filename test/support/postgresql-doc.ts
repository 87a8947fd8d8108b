/**
 * The SQL that docs/postgresql.md gives POS systems (section 4), as tests run it: the statements of each ```sql block,
 * in order (a block: a list of statements, comments dropped).
 */
import { readFileSync } from 'node:fs';

export function readerSectionBlocks(): string[][] {
  const doc = readFileSync(new URL('../../docs/postgresql.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## 4.'), doc.indexOf('\n## ', doc.indexOf('## 4.') + 1));
  return [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) =>
    (m[1] ?? '')
      .split(/;\s*(?:--[^\n]*)?\n/)
      .map((s) => s.replace(/^\s*--[^\n]*\n/gm, '').trim())
      .filter((s) => s.length > 0),
  );
}
