// A list page read in a worker must reach the store exactly as one read on the main thread:
// same keys, versions, projections and malformed reasons, with the pooled values pooled again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodePage, encodePage, projectPage, readListBody, readPageBytes, type ListPage } from '../../src/kube/list-page.js';
import { createJsonSieve, type JsonSieve } from '../../src/kube/sieve/json-sieve.js';
import { listKeepSpec } from '../../src/kube/sieve/keep-spec.js';
import { KINDS_BY_RESOURCE } from '../../src/kube/projections/kinds.js';
import { NODE_KIND, POD_KIND, PV_KIND, PVC_KIND, VOLUME_ATTACHMENT_KIND, type NodeRecord, type PvRecord, type ResourceKind } from '../../src/kube/projections/index.js';

const meta = (name: string, rv: string, ns?: string) => ({ name, resourceVersion: rv, uid: `uid-${name}`, ...(ns ? { namespace: ns } : {}) });

/** Per kind: valid objects (varied optional parts), one the projection rejects, one without identity. */
const PAGES: Array<{ kind: ResourceKind<unknown>; items: unknown[] }> = [
  {
    kind: POD_KIND as ResourceKind<unknown>,
    items: [
      { metadata: meta('p1', '11', 'ns'), spec: { nodeName: 'n1', volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'c1', readOnly: true } }, { name: 'inline', csi: { driver: 'd.example.com' } }, { name: 'tmp', emptyDir: {} }] }, status: { phase: 'Running', containerStatuses: [{ state: { running: {} } }] } },
      { metadata: { ...meta('p2', '12', 'ns'), deletionTimestamp: '2026-11-22T05:00:00Z' }, spec: { volumes: [{ name: 'eph', ephemeral: {} }, { name: 'gce', gcePersistentDisk: { pdName: 'disk', readOnly: true } }] }, status: {} },
      { metadata: meta('bad', '13', 'ns'), spec: { volumes: 'not-a-list' } },
      { metadata: { namespace: 'ns' } },
    ],
  },
  {
    kind: PV_KIND as ResourceKind<unknown>,
    items: [
      { metadata: meta('pv1', '21'), spec: { accessModes: ['ReadWriteOnce'], claimRef: { namespace: 'ns', name: 'c1', uid: 'u1' }, csi: { driver: 'd.example.com', volumeHandle: 'h1' } }, status: { phase: 'Bound' } },
      { metadata: meta('pv2', '22'), spec: { accessModes: ['ReadWriteMany', 'ReadOnlyMany'], nfs: { server: 's' } } },
      { metadata: meta('pv3', '23'), spec: { accessModes: [7] } },
    ],
  },
  {
    kind: PVC_KIND as ResourceKind<unknown>,
    items: [
      { metadata: { ...meta('c1', '31', 'ns'), ownerReferences: [{ controller: true, uid: 'owner' }] }, spec: { volumeName: 'pv1' }, status: { phase: 'Bound' } },
      { metadata: meta('c2', '32', 'ns') },
      { metadata: meta('c3', '33', 'ns'), spec: { volumeName: 5 } },
    ],
  },
  {
    kind: VOLUME_ATTACHMENT_KIND as ResourceKind<unknown>,
    items: [
      { metadata: { ...meta('va1', '41'), finalizers: ['f'] }, spec: { attacher: 'd.example.com', nodeName: 'n1', source: { persistentVolumeName: 'pv1' } }, status: { attached: true, attachError: { message: 'boom' } } },
      { metadata: meta('va2', '42'), spec: { nodeName: 'n1' } },
    ],
  },
];

const listText = (items: unknown[], metadata: Record<string, string>) => JSON.stringify({ kind: 'List', metadata, items });

/** A page without its timings (they differ run to run). */
const content = <T>(p: ListPage<T>) => ({ items: p.items, resourceVersion: p.resourceVersion, continueToken: p.continueToken });

describe('list pages read off the main thread', () => {
  for (const { kind, items } of PAGES) {
    it(`${kind.resource}: decode(encode(page)) equals the page read in place`, () => {
      const text = listText(items, { resourceVersion: '99', continue: 'next' });
      const inPlace = projectPage(kind, text);
      assert.equal(inPlace.items.filter((i) => i.reason !== undefined).length >= 1, true, 'the sample has a malformed item');
      const crossed = decodePage(kind, encodePage(projectPage(kind, text)));
      assert.deepEqual(content(crossed), content(inPlace));
      assert.equal(crossed.resourceVersion, '99');
      assert.equal(crossed.continueToken, 'next');
      assert.equal(typeof crossed.decodeMs, 'number');
    });
  }

  it('keeps identity-less items as unreadable and a last page without a continue token', () => {
    const page = decodePage(POD_KIND, encodePage(projectPage(POD_KIND, listText(PAGES[0]!.items, { resourceVersion: '5' }))));
    assert.equal(page.continueToken, undefined);
    assert.deepEqual(page.items[3], { reason: 'metadata.name: missing or not a string' });
    assert.equal(page.items[2]!.key, 'ns/bad');
    assert.equal(page.items[2]!.rv, '13');
    assert.match(page.items[2]!.reason ?? '', /spec\.volumes/);
  });

  it('an item whose uid or resourceVersion has the wrong type keeps its key: a relist keeps its last good version', () => {
    const items = [
      { metadata: { name: 'u', namespace: 'ns', uid: 12345, resourceVersion: '7' }, spec: { nodeName: 'n1' }, status: { phase: 'Running' } },
      { metadata: { name: 'r', namespace: 'ns', uid: 'uid-r', resourceVersion: 8 }, spec: { nodeName: 'n1' }, status: { phase: 'Running' } },
    ];
    const text = listText(items, { resourceVersion: '9' });
    for (const page of [projectPage(POD_KIND, text), decodePage(POD_KIND, encodePage(projectPage(POD_KIND, text)))]) {
      assert.equal(page.items[0]!.key, 'ns/u');
      assert.match(page.items[0]!.reason ?? '', /metadata\.uid/);
      assert.equal(page.items[1]!.key, 'ns/r');
      assert.match(page.items[1]!.reason ?? '', /metadata\.resourceVersion/);
      // A keyed item with a reason is "present but unprojectable": ProjectionStore.replace keeps it.
      assert.equal(page.items.every((i) => i.value === undefined), true);
    }
  });

  it('a node with a wrong-typed uid is read in part, not skipped (a skipped node reads as absent, hence unhealthy)', () => {
    const text = listText([{ metadata: { name: 'node-x', uid: 7, resourceVersion: '3' }, status: { conditions: [{ type: 'Ready', status: 'True' }], volumesInUse: ['v'] } }], { resourceVersion: '9' });
    const item = projectPage(NODE_KIND, text).items[0]!;
    assert.equal(item.reason, undefined);
    assert.equal(item.key, 'node-x');
    const node = item.value as NodeRecord;
    assert.deepEqual([node.uid, node.ready, node.volumesInUse], ['', true, ['v']]);
    assert.match((node.unreadable ?? []).join(';'), /metadata\.uid/);
  });

  it('pools the access-mode lists again: the crossed PV holds the very list the in-place one does', () => {
    const text = listText(PAGES[1]!.items, { resourceVersion: '1' });
    const inPlace = projectPage(PV_KIND, text).items[1]!.value as PvRecord;
    const crossed = decodePage(PV_KIND, encodePage(projectPage(PV_KIND, text))).items[1]!.value as PvRecord;
    assert.ok(Object.isFrozen(crossed.accessModes), 'a pooled list is frozen');
    assert.equal(crossed.accessModes, inPlace.accessModes, 'the same shared array, not an equal copy');
  });

  it('rejects a body that is not a list, as the in-place read does', () => {
    assert.throws(() => readListBody('x'), /not an object/);
    assert.throws(() => readListBody({ items: {} }), /not an array/);
    assert.throws(() => projectPage(POD_KIND, '{"items":'), SyntaxError);
  });

  it('finds every reflected kind by its resource name', () => {
    for (const { kind } of PAGES) assert.equal(KINDS_BY_RESOURCE.get(kind.resource), kind);
    assert.equal(KINDS_BY_RESOURCE.size, 7);
  });
});

describe('list pages read through the JSON sieve', () => {
  const sieve = createJsonSieve({ build: 'debug' });
  for (const { kind, items } of PAGES) {
    it(`${kind.resource}: the sieved page equals the page read whole`, () => {
      const text = listText(items, { resourceVersion: '99', continue: 'next' });
      const sieved = readPageBytes(kind, Buffer.from(text), sieve);
      assert.deepEqual(content(sieved), content(projectPage(kind, text)));
      assert.equal(sieved.continueToken, 'next');
    });
  }

  it('reads a page the sieve leaves alone (an escaped key) whole, and refuses an invalid one as JSON.parse does', () => {
    let calls = 0;
    const counting: JsonSieve = { sieve: (spec, body) => (calls++, sieve.sieve(spec, body)) };
    const text = listText(PAGES[0]!.items, { resourceVersion: '99' }).replace('"nodeName"', String.raw`"node\u004eame"`);
    assert.ok(text.includes(String.raw`node\u004eame`));
    assert.deepEqual(content(readPageBytes(POD_KIND, Buffer.from(text), counting)), content(projectPage(POD_KIND, text)));
    assert.equal(calls, 1);
    assert.deepEqual(sieve.sieve(listKeepSpec(POD_KIND.keep!), Buffer.from(text)), { ok: false, status: 'unsupported' });
    assert.throws(() => readPageBytes(POD_KIND, Buffer.from('{"items":[{"metadata":'), sieve), SyntaxError);
  });
});
