/**
 * The JSON sieve (assembly/sieve) against a reference written in JavaScript: for any JSON text
 * and keep spec, the sieved text parses to what JSON.parse of the whole text, filtered by the
 * spec, is; and a text is refused as invalid exactly when JSON.parse throws on it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createJsonSieve, type SieveResult } from '../../src/kube/sieve/json-sieve.js';
import type { KeepSpec } from '../../src/kube/sieve/keep-spec.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the sieve keeps of a parsed value, by the rules keep-spec.ts states. */
function reference(v: unknown, rule: true | KeepSpec | readonly [KeepSpec]): unknown {
  if (rule === true) return v;
  if (Array.isArray(rule)) return Array.isArray(v) ? v.map((e) => (isObject(e) ? filter(e, rule[0] as KeepSpec) : e)) : v;
  return isObject(v) ? filter(v, rule as KeepSpec) : v;
}
function filter(o: Record<string, unknown>, spec: KeepSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) {
    if (Object.hasOwn(spec, k)) Object.defineProperty(out, k, { value: reference(o[k], spec[k]!), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
/** A string with an escape in it, followed by a colon: a key written with escapes (or a value that looks like one). */
const KEY_WITH_ESCAPE = /"(?:[^"\\]|\\.)*\\.(?:[^"\\]|\\.)*"\s*:/;

const parses = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

// Keys the specs name, so that generated objects hold some of them; the quote and the
// backslash make JSON.stringify write escapes, which the sieve leaves to JSON.parse.
const KEYS = ['a', 'b', 'items', 'metadata', 'k q', 'ü', 'k"q', 'x\\y', ''];
const key = fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 6 }), fc.string({ unit: 'grapheme', maxLength: 4 }));
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null), fc.boolean(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.string({ unit: 'binary', maxLength: 12 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5 }),
  ),
})).value;
const spec: fc.Arbitrary<KeepSpec> = fc.letrec((tie) => ({
  spec: fc.dictionary(fc.constantFrom('a', 'b', 'items', 'metadata', 'k q', ''), tie('rule'), { maxKeys: 3 }),
  rule: fc.oneof({ depthSize: 'small' }, fc.constant(true), tie('spec'), tie('spec').map((s) => [s])),
})).spec as fc.Arbitrary<KeepSpec>;
const text = fc.tuple(json, fc.constantFrom(undefined, 0, 1, 2, '\t', ' \r\n')).map(([v, indent]) => JSON.stringify(v, null, indent as string | number | undefined));

for (const build of ['debug', 'release'] as const) describe(`JSON sieve (${build} build)`, () => {
  const sieve = createJsonSieve({ build });
  const run = (spec: KeepSpec, text: string): SieveResult => sieve.sieve(spec, Buffer.from(text, 'utf8'));

  it('keeps the named members, nested and of each array element, and copies other shapes whole', () => {
    const body = { metadata: { name: 'n', labels: { x: '1' } }, spec: { list: [{ a: 1, b: 2 }, 3, [4]], obj: [1, 2], s: 'x' }, status: 1 };
    const keep: KeepSpec = { metadata: { name: true }, spec: { list: [{ a: true }], obj: { z: true }, s: [{ a: true }] }, status: { phase: true } };
    const r = run(keep, JSON.stringify(body, null, 2));
    assert.ok(r.ok);
    assert.deepEqual(JSON.parse(r.text), { metadata: { name: 'n' }, spec: { list: [{ a: 1 }, 3, [4]], obj: [1, 2], s: 'x' }, status: 1 });
  });

  it('keeps the last of duplicate keys, as JSON.parse does, and reads whitespace anywhere between tokens', () => {
    const r = run({ a: { b: true }, c: true }, ' { "a" : 1 , "a" :\n{ "b" : 2 , "x" : [ 1 , { } ] } ,\t"c":[ ] , "d" : null }\r\n');
    assert.ok(r.ok);
    assert.deepEqual(JSON.parse(r.text), { a: { b: 2 }, c: [] });
  });

  it('refuses a keep spec key that is not printable ASCII (bytes and decoded text could disagree)', () => {
    assert.throws(() => run({ 'ü': true }, '{}'), /not printable ASCII/);
    assert.throws(() => run({ a: { '\ufffd': true } }, '{}'), /not printable ASCII/);
  });

  it('reads non-ASCII text as UTF-8 and values with escapes as written', () => {
    const body = { a: 'ü☃ \u0001 "q" \\ \ud800', b: { 'k"ey': 1 }, c: 2 };
    const r = run({ a: true, b: true }, JSON.stringify(body));
    assert.ok(r.ok);
    assert.deepEqual(JSON.parse(r.text), { a: body.a, b: body.b });
  });

  it('leaves a key written with escapes at a filtered level, and nesting past the limit, to JSON.parse', () => {
    assert.deepEqual(run({ a: true }, '{"\\u0061":1}'), { ok: false, status: 'unsupported' });
    const deep = '['.repeat(600) + ']'.repeat(600);
    assert.deepEqual(run({ a: true }, `{"a":${deep}}`), { ok: false, status: 'unsupported' });
  });

  it('refuses what JSON.parse refuses', () => {
    for (const bad of ['', ' ', '{', '{"a":1,}', '[1,]', '{"a" 1}', '{"a":01}', '{"a":1.}', '{"a":-}', '{"a":tru}', '{"a":"\n"}', '{"a":"\\x"}', '{"a":"\\u12g4"}', '{} {}', '{"a":1}]', 'nul', '"abc', '{"a":[1 2]}']) {
      assert.equal(parses(bad), false, bad);
      assert.deepEqual(run({ a: true }, bad), { ok: false, status: 'invalid' }, JSON.stringify(bad));
    }
  });

  it('parses to the reference filter of JSON.parse for any text and spec', () => {
    fc.assert(
      fc.property(text, spec, (t, s) => {
        const r = run(s, t);
        if (!r.ok) {
          assert.equal(r.status, 'unsupported', t);
          assert.match(t, KEY_WITH_ESCAPE, 'only a text with a key written with escapes is left unsieved');
          return;
        }
        assert.deepEqual(JSON.parse(r.text), reference(JSON.parse(t), s));
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('refuses a mutated text exactly when JSON.parse does, and otherwise still agrees with it', () => {
    const mutation = fc.tuple(fc.nat(), fc.constantFrom('insert', 'replace', 'delete'), fc.constantFrom(...'{}[]",:\\ 0123456789.eE+-tfnulrsa\t\n\u0000'));
    fc.assert(
      fc.property(text, spec, mutation, (t, s, [at, op, ch]) => {
        const i = t.length === 0 ? 0 : at % t.length;
        // A cut inside a surrogate pair leaves a lone surrogate, which UTF-8 cannot carry: the
        // text is what its bytes (the sieve's input) decode to.
        const m = Buffer.from(op === 'delete' ? t.slice(0, i) + t.slice(i + 1) : t.slice(0, i) + ch + t.slice(op === 'insert' ? i : i + 1)).toString('utf8');
        const r = run(s, m);
        if (!parses(m)) {
          // An escaped key may stop the sieve (unsupported) before the error: the host then
          // parses the whole text, and JSON.parse throws.
          assert.equal(r.ok, false, JSON.stringify(m));
        } else if (r.ok) {
          assert.deepEqual(JSON.parse(r.text), reference(JSON.parse(m), s), JSON.stringify(m));
        } else {
          assert.equal(r.status, 'unsupported', JSON.stringify(m));
        }
      }),
      { seed: SEED, numRuns: RUNS * 3 },
    );
  });

  it('drops its written specs when they fill the spec area, and goes on', () => {
    const own = createJsonSieve({ build });
    for (let i = 0; i < 3000; i++) {
      const r = own.sieve({ [`key-${i}-${'k'.repeat(40)}`]: true, a: true }, Buffer.from(`{"a":${i},"b":1}`));
      assert.deepEqual(r, { ok: true, text: `{"a":${i}}`, bytes: `{"a":${i}}`.length });
    }
    assert.throws(() => own.sieve({ ['k'.repeat(70_000)]: true }, Buffer.from('{}')), /exceeds the spec area/);
  });

  it('leaves a body it has no room for to JSON.parse', () => {
    const small = createJsonSieve({ build, maxMemoryBytes: 4 * 65536 });
    const body = Buffer.from(JSON.stringify({ a: 1, b: 'x'.repeat(200_000) }));
    assert.deepEqual(small.sieve({ a: true }, body), { ok: false, status: 'unsupported' });
    assert.deepEqual(small.sieve({ a: true }, Buffer.from('{"a":1,"b":2}')), { ok: true, text: '{"a":1}', bytes: 7 });
  });

  it('sieves a body longer than its memory, growing it', () => {
    const big = JSON.stringify({ items: Array.from({ length: 20_000 }, (_, i) => ({ a: i, b: 'x'.repeat(20) })) });
    const r = run({ items: [{ a: true }] }, big);
    assert.ok(r.ok);
    assert.equal((JSON.parse(r.text) as { items: Array<{ a: number }> }).items[19_999]!.a, 19_999);
  });
});
