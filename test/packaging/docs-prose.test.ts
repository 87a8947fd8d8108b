/**
 * The docs are written for their readers (issue 29): prose is wrapped, never one line over 300 characters (a
 * paragraph of history pasted into one line), and no page says who did the work or in which sitting: that history
 * is in git. Tables and fenced code blocks are not prose (a table row or a command may be long); the words of who
 * and when are refused anywhere on a page, tables included.
 */
import { describe, expect, it } from 'vitest';
import { markdownPages, readRepoFile } from './support.ts';

const PAGES = [...markdownPages(), 'test/fixtures/real/README.md'];

/** Characters, not bytes; a wrapped paragraph's lines are about 120. */
const MAX_PROSE_LINE = 300;

/** Who did the work, and in which sitting: words of a lab notebook, not of a manual. */
const WHO_OR_WHEN = [/\bsessions? \d/i, /\bthe lead\b/i, /\bsitting\b/i, /\bengineers?\b/i, /\bthis (?:morning|afternoon|evening|night)\b/i, /\bmeasured here\b/i];

interface Line {
  readonly number: number;
  readonly text: string;
}

/** The lines of a page that are prose: not inside a fenced code block (indented fences too), not a table row. */
function proseLines(markdown: string): Line[] {
  const prose: Line[] = [];
  let fenced = false;
  markdown.split('\n').forEach((text, index) => {
    const trimmed = text.trimStart();
    if (trimmed.startsWith('```') || trimmed.startsWith('~~~')) fenced = !fenced;
    else if (!fenced && !trimmed.startsWith('|')) prose.push({ number: index + 1, text });
  });
  return prose;
}

function whoOrWhen(markdown: string): Line[] {
  return markdown
    .split('\n')
    .map((text, index) => ({ number: index + 1, text }))
    .filter((line) => WHO_OR_WHEN.some((word) => word.test(line.text)));
}

describe('docs for their readers', () => {
  it('counts as prose what is outside fenced code blocks and tables', () => {
    const page = ['# Title', 'a paragraph', '| a | table |', '```sh', 'npm test', '```', '  ```ini', '  [Unit]', '  ```', 'after'].join('\n');
    expect(proseLines(page).map((line) => line.text)).toEqual(['# Title', 'a paragraph', 'after']);
  });

  it('finds the words of who and when, and not a curl session or the leading zeros', () => {
    const page = ['measured by the lead in session 7', 'A curl session', 'leading zeros', 'another sitting', 'other engineers were running tests'].join('\n');
    expect(whoOrWhen(page).map((line) => line.number)).toEqual([1, 4, 5]);
  });

  it.each(PAGES)(`%s has no line of prose over ${MAX_PROSE_LINE} characters`, (page) => {
    const long = proseLines(readRepoFile(page))
      .filter((line) => line.text.length > MAX_PROSE_LINE)
      .map((line) => `${page}:${line.number}: ${line.text.length} characters; wrap it, or cut the history (git keeps it)`);
    expect(long).toEqual([]);
  });

  it.each(PAGES)('%s says nothing of who did the work or in which sitting', (page) => {
    const found = whoOrWhen(readRepoFile(page)).map((line) => `${page}:${line.number}: ${line.text.slice(0, 160)}`);
    expect(found, 'say what is true and how to check it; who measured when belongs in git').toEqual([]);
  });
});
