/** docs/feed.md, and the fenced blocks the tests run (marked `<!-- name -->` on the line before the fence). */
import { readFileSync } from 'node:fs';

export const FEED_DOC = readFileSync(new URL('../../docs/feed.md', import.meta.url), 'utf8');

/** The fenced block right after `<!-- name -->`. */
export function docBlock(name: string): string {
  const match = new RegExp(`<!-- ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(FEED_DOC);
  if (!match?.[1]) throw new Error(`docs/feed.md has no block after <!-- ${name} -->`);
  return match[1];
}
