/**
 * The config file as a yaml Document plus what is needed to point at lines in it: reading, parsing with
 * positions, and mapping a YAML path (from zod or from our own checks) to the line a person should look at.
 */
import { readFile } from 'node:fs/promises';
import { LineCounter, isAlias, isMap, isNode, isPair, isScalar, isSeq, parseDocument } from 'yaml';
import type { Document, Node, Pair } from 'yaml';
import { ConfigError, formatPath } from './errors.ts';
import type { ConfigPath, ConfigProblem } from './errors.ts';

export interface YamlSource {
  /** Absolute path of the file. */
  readonly file: string;
  readonly doc: Document.Parsed;
  readonly lines: LineCounter;
}

/**
 * Reads and parses the file. A missing or unreadable file and YAML syntax errors are ConfigErrors; a missing
 * file says how to create one, in one sentence.
 */
export async function readYamlSource(file: string): Promise<YamlSource> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new ConfigError(
        file,
        [],
        `Config file ${file} not found: copy config.example.yaml to ${file} and edit it, or pass --config <file>.`,
      );
    }
    const reason = code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : code;
    throw new ConfigError(file, [], `Cannot read config file ${file}: ${reason ?? 'unknown error'}.`);
  }
  if (text.includes('\0')) {
    // Saved as UTF-16 ("Unicode" in Notepad): read as UTF-8 it is text with a NUL between letters.
    throw new ConfigError(file, [], `Config file ${file} is not UTF-8 (it looks like UTF-16, "Unicode" in Notepad): save it as UTF-8 and run the command again.`);
  }
  const lines = new LineCounter();
  // `merge: true` enables `<<: *defaults` merge keys (off by default in YAML 1.2); duplicate keys are errors.
  const doc = parseDocument(text, { prettyErrors: true, lineCounter: lines, merge: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // One problem per line: the parser often reports a second error for the same mistake.
    const firstPerLine = doc.errors.filter((err, i) => doc.errors.findIndex((e) => e.linePos?.[0].line === err.linePos?.[0].line) === i);
    const problems = firstPerLine.map((err) => ({
      path: '',
      // With prettyErrors the message carries " at line L, column C:" and a source excerpt; the line number is
      // reported in our own format instead.
      message: yamlSyntaxSentence(err.code, (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '')),
      line: err.linePos?.[0].line,
    }));
    throw new ConfigError(file, problems);
  }
  return { file, doc, lines };
}

/** What to do, by the parser's error code, for the mistakes people make when they edit YAML by hand. */
const YAML_FIXES: Readonly<Record<string, string>> = {
  BAD_INDENT: 'indent this key with as many spaces as the other keys of its section',
  TAB_AS_INDENT: 'indent with spaces only, never tabs',
  MISSING_CHAR: "indent this key like the other keys of its list item (two spaces past the '- '), or start a new item with '- '",
  BLOCK_AS_IMPLICIT_KEY: "write each setting as 'key: value' on one line, and indent the next line deeper only if it belongs under it",
  MULTILINE_IMPLICIT_KEY: "write each setting as 'key: value' on one line, and indent the next line deeper only if it belongs under it",
  DUPLICATE_KEY: 'keep one of the two',
  MULTIPLE_DOCS: "the file holds one configuration: remove the '---' line and merge what follows it into the sections above",
};

/** The parser's message and what to do about it. */
function yamlSyntaxSentence(code: string, message: string): string {
  const fix = code === 'MISSING_CHAR' && message.includes('quote') ? 'close the quote on the line where it opens' : YAML_FIXES[code];
  // The parser's own words for it name one of its functions ("please use YAML.parseAllDocuments()").
  const said = code === 'MULTIPLE_DOCS' ? 'more than one document' : message;
  return `YAML syntax: ${said}${fix === undefined ? '' : `: ${fix}`}`;
}

interface Located {
  /** The node at the path; undefined when the path does not exist in the file. */
  readonly node?: Node;
  /** The mapping entry whose value is `node`. */
  readonly pair?: Pair;
  /** For a missing path: the deepest entry (or sequence item) that does exist; undefined at the top level. */
  readonly parent?: Node | Pair;
}

function locate(source: YamlSource, path: ConfigPath): Located {
  let current: unknown = source.doc.contents;
  let pair: Pair | undefined;
  let parent: Node | Pair | undefined;
  for (const segment of path) {
    if (isAlias(current)) current = current.resolve(source.doc);
    if (isMap(current)) {
      const found = current.items.find((item) => isScalar(item.key) && String(item.key.value) === String(segment));
      if (found === undefined) return { parent };
      pair = found;
      current = found.value;
      parent = found;
    } else if (isSeq(current) && typeof segment === 'number' && isNode(current.items[segment])) {
      pair = undefined;
      current = current.items[segment];
      parent = current as Node;
    } else {
      return { parent };
    }
  }
  return isNode(current) ? { node: current, pair } : { parent };
}

function lineAt(source: YamlSource, offset: number | undefined): number | undefined {
  return offset === undefined ? undefined : source.lines.linePos(offset).line;
}

function startOf(item: Node | Pair | undefined): number | undefined {
  if (item === undefined) return undefined;
  if (isPair(item)) return isNode(item.key) ? item.key.range?.[0] : undefined;
  return item.range?.[0];
}

/**
 * The line a problem at `path` should point to. `at: 'key'` points to the key itself (an unknown key); otherwise
 * to the value, or to its key when the value is empty or a nested mapping or list (which starts on a later
 * line). A missing key points to the entry of its parent; a missing top-level key has no line.
 */
export function lineOf(source: YamlSource, path: ConfigPath, at: 'key' | 'value' = 'value'): number | undefined {
  const { node, pair, parent } = locate(source, path);
  if (node === undefined) return lineAt(source, startOf(parent));
  const empty = isScalar(node) && (node.value === null || node.range === undefined);
  if (pair !== undefined && (at === 'key' || empty || isMap(node) || isSeq(node))) {
    return lineAt(source, startOf(pair));
  }
  return lineAt(source, node.range?.[0]);
}

/** A problem located in the file. */
export function problemAt(
  source: YamlSource,
  path: ConfigPath,
  message: string,
  at: 'key' | 'value' = 'value',
): ConfigProblem {
  const line = lineOf(source, path, at);
  return line === undefined ? { path: formatPath(path), message } : { path: formatPath(path), message, line };
}
