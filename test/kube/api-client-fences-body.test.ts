/**
 * The JSON Patch bodies of the compare-and-swap writes (src/kube/json-patch.ts): what is tested
 * and what is written for each pair of expected and next lists, and JSON Pointer escaping.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonPatchBody, pointerToken, volumesAttachedCas } from '../../src/kube/json-patch.js';

const A = { name: 'kubernetes.io/csi/d^a', devicePath: '' };
const B = { name: 'kubernetes.io/csi/d^b', devicePath: '/dev/b' };
const P = '/status/volumesAttached';

describe('volumesAttachedCas', () => {
  it('tests the list as expected, then replaces it', () => {
    assert.deepEqual(volumesAttachedCas([A], [A, B]), [
      { op: 'test', path: P, value: [A] },
      { op: 'replace', path: P, value: [A, B] },
    ]);
  });

  it('tests an absent list as null and adds the new one', () => {
    for (const expected of [null, []]) {
      assert.deepEqual(volumesAttachedCas(expected, [B]), [
        { op: 'test', path: P, value: null },
        { op: 'add', path: P, value: [B] },
      ]);
    }
  });

  it('removes the list when the next one is empty, and only tests when both are', () => {
    assert.deepEqual(volumesAttachedCas([A], []), [{ op: 'test', path: P, value: [A] }, { op: 'remove', path: P }]);
    assert.deepEqual(volumesAttachedCas([A], null), [{ op: 'test', path: P, value: [A] }, { op: 'remove', path: P }]);
    assert.deepEqual(volumesAttachedCas(null, []), [{ op: 'test', path: P, value: null }]);
  });

  it('sends exactly name and devicePath per entry, in order, whatever else the caller holds', () => {
    const extra = { ...B, attachedAt: 5 } as typeof B;
    const [test, replace] = volumesAttachedCas([extra, A], [A]);
    assert.equal(JSON.stringify(test), `{"op":"test","path":"${P}","value":[{"name":"${B.name}","devicePath":"/dev/b"},{"name":"${A.name}","devicePath":""}]}`);
    assert.equal(JSON.stringify(replace), `{"op":"replace","path":"${P}","value":[{"name":"${A.name}","devicePath":""}]}`);
  });
});

describe('pointerToken', () => {
  it('escapes ~ before / (RFC 6901)', () => {
    assert.equal(pointerToken('fleet-attach.io/attach-lock'), 'fleet-attach.io~1attach-lock');
    assert.equal(pointerToken('a~/b'), 'a~0~1b');
    assert.equal(pointerToken('plain'), 'plain');
  });
});

describe('jsonPatchBody', () => {
  it('escapes what Go escapes in strings (<, >, &, U+2028, U+2029), so a tested value compares equal byte for byte', () => {
    const body = jsonPatchBody([{ op: 'test', path: '/metadata/annotations/k', value: 'a<b>&c\u2028d\u2029é' }]);
    assert.equal(body, '[{"op":"test","path":"/metadata/annotations/k","value":"a\\u003cb\\u003e\\u0026c\\u2028d\\u2029é"}]');
    assert.deepEqual(JSON.parse(body), [{ op: 'test', path: '/metadata/annotations/k', value: 'a<b>&c\u2028d\u2029é' }]);
  });
});
