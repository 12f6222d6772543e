/**
 * Each kind's keep spec (ResourceKind.keep) against its projection: every member the projection
 * reads, present or absent, lies inside the spec (recorded through a Proxy over hand-made objects
 * that take each branch, and over fuzzed variants of them), and reading a sieved object gives the
 * same item, value or reason, as reading the whole one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { readItem } from '../../src/kube/list-page.js';
import { KINDS_BY_RESOURCE } from '../../src/kube/projections/kinds.js';
import type { ResourceKind } from '../../src/kube/projections/read.js';
import { createJsonSieve } from '../../src/kube/sieve/json-sieve.js';
import type { KeepSpec } from '../../src/kube/sieve/keep-spec.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const sieve = createJsonSieve({ build: 'debug' });

const meta = { name: 'obj', namespace: 'ns', uid: 'u-1', resourceVersion: '7', labels: { 'topology.kubernetes.io/zone': 'z1', other: 'x' }, annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true', 'storage.alpha.kubernetes.io/migrated-plugins': 'kubernetes.io/gce-pd', big: 'y' }, finalizers: ['f'], managedFields: [{ manager: 'm' }] };
const deleting = { ...meta, deletionTimestamp: '2026-11-23T00:00:00Z' };
const FIXTURES: Record<string, unknown[]> = {
  pods: [
    {
      metadata: deleting,
      spec: {
        nodeName: 'n1', containers: [{ name: 'c', image: 'i' }],
        volumes: [
          { name: 'a', persistentVolumeClaim: { claimName: 'c', readOnly: true } }, { name: 'b', ephemeral: { volumeClaimTemplate: {} } },
          { name: 'c', csi: { driver: 'd', readOnly: false } }, { name: 'd', awsElasticBlockStore: { volumeID: 'v', readOnly: true } },
          { name: 'e', fc: { targetWWNs: ['w'], lun: 1 } }, { name: 'f', nfs: { server: 's' } }, { name: 'g' },
        ],
      },
      status: {
        phase: 'Running', initContainerStatuses: [{ name: 'i', state: { terminated: { exitCode: 0 } } }],
        containerStatuses: [{ name: 'c', ready: false, state: { waiting: { reason: 'r' } } }], ephemeralContainerStatuses: [{ state: { running: {} } }],
      },
    },
    { metadata: meta, spec: { volumes: [] }, status: { containerStatuses: [{ name: 'c' }, { state: { terminated: {} } }] } },
    { metadata: meta },
  ],
  persistentvolumeclaims: [
    { metadata: { ...meta, ownerReferences: [{ uid: 'p0', controller: false }, { uid: 'p1', controller: true, kind: 'Pod' }] }, spec: { volumeName: 'pv', accessModes: ['ReadWriteOnce'] }, status: { phase: 'Bound', capacity: {} } },
    { metadata: meta, spec: {} },
  ],
  persistentvolumes: [
    { metadata: meta, spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, claimRef: { namespace: 'ns', name: 'c', uid: 'u' }, csi: { driver: 'd', volumeHandle: 'h', readOnly: true, volumeAttributes: { a: 'b' } } }, status: { phase: 'Bound' } },
    { metadata: meta, spec: { accessModes: ['ReadWriteMany'], gcePersistentDisk: { pdName: 'p' }, nodeAffinity: {} } },
    { metadata: meta, spec: { accessModes: [], nfs: { server: 's' }, storageClassName: 'x' } },
  ],
  volumeattachments: [
    { metadata: deleting, spec: { attacher: 'd', nodeName: 'n1', source: { persistentVolumeName: 'pv' } }, status: { attached: true, attachmentMetadata: { a: 'b' }, attachError: { message: 'm', time: 't' }, detachError: { time: 't' } } },
    { metadata: meta, spec: { attacher: 'd', nodeName: 'n1', source: { inlineVolumeSpec: { csi: { driver: 'd' } } } } },
  ],
  nodes: [
    {
      metadata: meta, spec: { podCIDR: 'x', taints: [{ key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute', value: 'v' }, { key: 'k' }] },
      status: { images: [{ names: ['i'] }], conditions: [{ type: 'MemoryPressure', status: 'False', message: 'm' }, { type: 'Ready', status: 'True', reason: 'r' }], volumesInUse: ['u1'], volumesAttached: [{ name: 'u1', devicePath: '/dev/x' }] },
    },
    { metadata: { name: 'n2', uid: 5 }, spec: 3, status: { conditions: 'x', volumesAttached: [{ name: 1 }, 'y'], volumesInUse: [2] } },
    { metadata: { name: 'n3' }, status: 4 },
  ],
  csidrivers: [{ metadata: meta, spec: { attachRequired: false, podInfoOnMount: true } }, { metadata: meta }],
  csinodes: [{ metadata: meta, spec: { drivers: [{ name: 'd' }] } }, { metadata: { name: 'n' } }],
};

type Rule = true | KeepSpec | readonly [KeepSpec];

/** Whether the member at `path` (keys; '[]' for any array index, '*' for the list of keys) survives `rule`. */
function covered(rule: Rule, path: readonly string[]): boolean {
  if (rule === true || path.length === 0) return true;
  const [seg, ...rest] = path as [string, ...string[]];
  if (Array.isArray(rule)) return seg !== '[]' || covered(rule[0] as KeepSpec, rest); // a non-array value is kept whole
  if (seg === '[]') return true; // an array where the spec expects an object: kept whole
  const spec = rule as KeepSpec;
  return seg !== '*' && Object.hasOwn(spec, seg) && covered(spec[seg]!, rest);
}

/** `v` behind proxies that record the path of every member read, or enumerated ('*'). */
function recording(v: unknown, path: string[], reads: string[][]): unknown {
  if (typeof v !== 'object' || v === null) return v;
  const seg = (t: object, k: string) => (Array.isArray(t) && /^\d+$/.test(k) ? '[]' : k);
  const note = (t: object, k: string | symbol): boolean => {
    if (typeof k === 'symbol' || k in Object.getPrototypeOf(t)) return false; // length, map, constructor, …
    reads.push([...path, seg(t, k)]);
    return true;
  };
  return new Proxy(v, {
    get: (t, k, r) => (note(t, k) ? recording(Reflect.get(t, k, r), [...path, seg(t, k as string)], reads) : Reflect.get(t, k, r)),
    has: (t, k) => (note(t, k), Reflect.has(t, k)),
    getOwnPropertyDescriptor: (t, k) => (note(t, k), Reflect.getOwnPropertyDescriptor(t, k)),
    ownKeys: (t) => (reads.push([...path, '*']), Reflect.ownKeys(t)),
  });
}

function checkObject(kind: ResourceKind<unknown>, obj: unknown): void {
  const keep = kind.keep!;
  const reads: string[][] = [];
  readItem(kind, recording(JSON.parse(JSON.stringify(obj)), [], reads));
  for (const p of reads) assert.ok(covered(keep, p), `${kind.resource}: ${p.join('.')} is read but not kept`);
  const text = JSON.stringify(obj);
  const slim = sieve.sieve(keep, Buffer.from(text));
  if (!slim.ok) {
    assert.equal(slim.status, 'unsupported');
    return;
  }
  assert.deepEqual(readItem(kind, JSON.parse(slim.text)), readItem(kind, JSON.parse(text)), `${kind.resource}: ${text}`);
}

const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null), fc.boolean(), fc.integer(), fc.constantFrom('', 'True', 'Ready', 'x', '2026-11-23T00:00:00Z', 'node.kubernetes.io/out-of-service'),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('name', 'state', 'terminated', 'waiting', 'type', 'status', 'key', 'message', 'driver', 'claimName', 'x'), tie('value'), { maxKeys: 3 }),
  ),
})).value;

/** Paths of every member inside `o`, root excluded. */
function pathsIn(o: unknown, prefix: string[] = []): string[][] {
  if (typeof o !== 'object' || o === null) return [];
  return Object.entries(o).flatMap(([k, v]) => [[...prefix, k], ...pathsIn(v, [...prefix, k])]);
}

/** `o` with the member at `path` replaced by `value`, or removed when `value` is undefined. */
function replaced(o: unknown, path: string[], value: unknown): unknown {
  const copy = structuredClone(o) as Record<string, unknown>;
  let cur = copy;
  for (const k of path.slice(0, -1)) cur = cur[k] as Record<string, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined && Array.isArray(cur)) cur.splice(Number(last), 1);
  else if (value === undefined) delete cur[last];
  else cur[last] = value;
  return copy;
}

describe('keep specs', () => {
  it('every reflected kind has one', () => {
    for (const kind of KINDS_BY_RESOURCE.values()) assert.ok(kind.keep, kind.resource);
  });

  for (const [resource, objects] of Object.entries(FIXTURES)) {
    const kind = KINDS_BY_RESOURCE.get(resource)!;
    it(`${resource}: cover every member the projection reads, and read the same sieved`, () => {
      for (const obj of objects) checkObject(kind, obj);
      const variants = fc.tuple(fc.constantFrom(...objects), fc.nat(), fc.option(json, { nil: undefined })).map(([o, i, v]) => {
        const ps = pathsIn(o);
        return replaced(o, ps[i % ps.length]!, v);
      });
      fc.assert(fc.property(variants, (o) => checkObject(kind, o)), { seed: SEED, numRuns: RUNS });
    });
  }

  it('the recorder sees a read outside a spec', () => {
    const reads: string[][] = [];
    const o = recording({ spec: { a: 1, list: [{ b: 2 }] } }, [], reads) as { spec: { c?: number; list: Array<{ b: number; d?: number }> } };
    void o.spec.c;
    void o.spec.list[0]!.d;
    void Object.keys(o.spec);
    const spec: KeepSpec = { spec: { a: true, list: [{ b: true }] } };
    assert.deepEqual(reads.filter((p) => !covered(spec, p)), [['spec', 'c'], ['spec', 'list', '[]', 'd'], ['spec', '*']]);
  });
});
