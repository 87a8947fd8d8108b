/**
 * `${VAR}` and `${VAR:-default}` interpolation from the environment.
 *
 * It runs on the parsed Document, value by value, not on the file's text: a value from the environment can
 * never change the structure of the YAML (a `:` or a newline in a variable stays inside its value), a `${...}`
 * in a comment is ignored, and every problem knows its YAML path and line. Mapping keys are not interpolated.
 *
 * Rules:
 * - `${VAR}`: the variable's value; an unset variable is an error naming it (set but empty is allowed).
 * - `${VAR:-default}`: the default when VAR is unset or empty (as in the shell). The default is literal text up
 *   to the first `}`.
 * - `$${` is a literal `${` (so `$${HOME}` stays `${HOME}`); any other `$` is literal.
 * - A plain (unquoted) scalar that contained a reference is re-read as a YAML scalar after substitution, so
 *   `timeout_ms: ${TIMEOUT_MS:-30000}` is a number and `pretty: ${LOG_PRETTY:-false}` a boolean, and an empty
 *   result is "not set". Quoted and block scalars always stay strings.
 */
import { Scalar, isAlias, isMap, isPair, isScalar, isSeq, parseDocument } from 'yaml';
import type { ConfigPath, ConfigProblem } from './errors.ts';
import { problemAt } from './yaml-source.ts';
import type { YamlSource } from './yaml-source.ts';

/** The environment as read by the loader (process.env or a test's own object). */
export type Env = Readonly<Record<string, string | undefined>>;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export type InterpolationResult =
  | { readonly ok: true; readonly value: string; readonly replaced: boolean }
  | { readonly ok: false; readonly message: string };

/** Interpolates one string. Pure; exported for tests and for other string-valued sources. */
export function interpolateString(text: string, env: Env): InterpolationResult {
  let out = '';
  let replaced = false;
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('$${', i)) {
      out += '${';
      i += 3;
      replaced = true;
      continue;
    }
    if (!text.startsWith('${', i)) {
      out += text[i];
      i += 1;
      continue;
    }
    const close = text.indexOf('}', i + 2);
    if (close === -1) return { ok: false, message: 'unterminated ${ (write $${ for a literal ${)' };
    const inner = text.slice(i + 2, close);
    const sep = inner.indexOf(':-');
    const name = sep === -1 ? inner : inner.slice(0, sep);
    if (!NAME.test(name)) {
      return { ok: false, message: `invalid reference \${${inner}} (expected \${NAME} or \${NAME:-default})` };
    }
    const value = env[name];
    if (sep === -1) {
      if (value === undefined) {
        return {
          ok: false,
          message: `environment variable ${name} is not set (set it, or write \${${name}:-default} for a default)`,
        };
      }
      out += value;
    } else {
      out += value === undefined || value === '' ? inner.slice(sep + 2) : value;
    }
    replaced = true;
    i = close + 1;
  }
  return { ok: true, value: out, replaced };
}

/** Re-reads the text of a plain scalar after substitution: numbers, booleans and null keep their YAML meaning. */
function reresolvePlain(text: string): unknown {
  if (text.trim() === '') return null;
  const doc = parseDocument(text);
  if (doc.errors.length > 0 || !isScalar(doc.contents) || doc.contents.type !== Scalar.PLAIN) return text;
  const value = doc.contents.value;
  return value === null || typeof value === 'number' || typeof value === 'boolean' ? value : text;
}

/**
 * Interpolates every string value of the document in place and returns the problems found (all of them, not
 * only the first). Aliases are skipped: the anchored node they point to is interpolated where it is defined.
 */
export function interpolateDocument(source: YamlSource, env: Env): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const visit = (node: unknown, path: ConfigPath): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const key = isScalar(pair.key) ? pair.key.value : undefined;
        visit(pair.value, [...path, typeof key === 'number' ? key : String(key)]);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => visit(item, [...path, index]));
    } else if (isScalar(node) && !isAlias(node) && typeof node.value === 'string') {
      const result = interpolateString(node.value, env);
      if (!result.ok) {
        problems.push(problemAt(source, path, result.message));
      } else if (result.replaced) {
        node.value = node.type === Scalar.PLAIN ? reresolvePlain(result.value) : result.value;
      }
    }
  };
  visit(source.doc.contents, []);
  return problems;
}
