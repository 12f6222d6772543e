import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodePage, encodePage, projectPage } from '../../src/kube/list-page.js';
import { POD_KIND } from '../../src/kube/projections/pod.js';
import { isInternalized } from '../support/internalized.js';

/** A pod list page, one pod per resourceVersion, read as the controller reads it. */
const page = (rvs: string[]) =>
  projectPage(POD_KIND, JSON.stringify({
    items: rvs.map((rv, i) => ({ metadata: { namespace: 'ns', name: `p${i}`, uid: `u${i}`, resourceVersion: rv }, spec: { nodeName: 'n1', volumes: [] } })),
  }));

test('premise: JSON.parse internalises a short string value and not a longer one', () => {
  const o = JSON.parse(`{"a":"${String(Date.now() % 1e9)}","b":"${String(Date.now())}x"}`) as { a: string; b: string };
  assert.equal(isInternalized(o.a), true);
  assert.equal(isInternalized(o.b), false);
});

test('a canonical resourceVersion crosses as a number and decodes to the same text, not internalised', () => {
  const rvs = ['12', '987654', String(2 ** 31 - 1)];
  const text = encodePage(page(rvs));
  const raw = JSON.parse(text) as { items: Array<[string, unknown]> };
  assert.deepEqual(raw.items.map((it) => it[1]), [12, 987654, 2 ** 31 - 1]);
  const decoded = decodePage(POD_KIND, text);
  assert.deepEqual(decoded.items.map((it) => it.rv), rvs);
  for (const it of decoded.items) assert.equal(isInternalized(it.rv as string), false, `rv ${it.rv}`);
});

test('any other resourceVersion crosses as the string it is', () => {
  const rvs = ['', '007', 'abc', String(2 ** 31), '12345678901'];
  const text = encodePage(page(rvs));
  const raw = JSON.parse(text) as { items: Array<[string, unknown]> };
  assert.deepEqual(raw.items.map((it) => it[1]), rvs);
  assert.deepEqual(decodePage(POD_KIND, text).items.map((it) => it.rv), rvs);
});
