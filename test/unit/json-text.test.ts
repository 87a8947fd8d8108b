/**
 * parseJsonText reads keys written with escapes as they are written, where V8's JSON.parse (Node.js 24) can read
 * them as a backslash once an earlier parse saw an object with a backslash key (nodejs/node#63785).
 */
import { expect, it } from 'vitest';
import { hasEscapedKey, parseJsonText } from '../../src/json-text.ts';

it('reads an escaped key as written after a parse that saw a backslash key', () => {
  parseJsonText(String.raw`{"h":[],"\\":0}`);
  JSON.parse(String.raw`{"h":[],"\\":0}`); // what misleads JSON.parse on this engine
  expect(Object.keys(parseJsonText(String.raw`{"h":1,"\"":2}`) as object)).toEqual(['h', '"']);
  expect(Object.keys(parseJsonText(String.raw`{"h":1,"\n":2}`) as object)).toEqual(['h', '\n']);
  expect(parseJsonText(String.raw`[{"h":1,"\u0022":{"\t":[{"__proto__":1,"\\":2}]}}]`)).toEqual([{ h: 1, '"': { '\t': [JSON.parse('{"__proto__":1,"\\\\":2}')] } }]);
});

it('keeps what JSON.parse does with key order, a key met twice, __proto__ and array-index keys', () => {
  const value = parseJsonText(String.raw`{"b":1,"\u0061":2,"a":3,"\u0031":4,"__proto__":{"x\"":5}}`) as Record<string, unknown>;
  expect(Object.keys(value)).toEqual(['1', 'b', 'a', '__proto__']);
  expect(value).toEqual(JSON.parse('{"b":1,"a":3,"1":4,"__proto__":{"x\\"":5}}'));
  expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toEqual({ 'x"': 5 });
});

it('tells escaped keys from escaped values, and leaves a text that is not JSON to JSON.parse', () => {
  expect(hasEscapedKey(String.raw`{"a":"x\"y","b":["\\"]}`)).toBe(false);
  expect(hasEscapedKey(String.raw`{"a":1,"x\"y" : 2}`)).toBe(true);
  expect(parseJsonText(String.raw`{"a":"x\"y"}`)).toEqual({ a: 'x"y' });
  expect(() => parseJsonText(String.raw`{"a\":1`)).toThrow(SyntaxError);
  expect(parseJsonText('{"\uE000":{"\\u0041":1}}')).toEqual({ '\uE000': { A: 1 } }); // a key that looks like the placeholders
});
