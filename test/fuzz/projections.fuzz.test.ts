/**
 * Fuzzing the object projections (src/kube/projections) with fast-check, fixed seed, bounded
 * runs: whatever the input, a projection returns `{ ok: true, value }` with well-typed fields
 * or `{ ok: false, reason }` with a non-empty reason, and never throws. Inputs are arbitrary
 * JSON, and valid objects with one field replaced by arbitrary JSON (the likelier accident),
 * with long, non-ASCII and prototype-ish keys and values.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  projectCsiDriver, projectCsiNode, projectLease, projectNode, projectPod, projectPv, projectPvc, projectVolumeAttachment,
  readMeta, ProjectionError, type Projected,
} from '../../src/kube/projections/index.js';

// Fixed for npm test; FUZZ_SEED / FUZZ_RUNS explore further.
const SEED = Number(process.env.FUZZ_SEED ?? 20261121);
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

const weirdString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom('', '__proto__', 'constructor', 'toString', 'ReadWriteOnce', 'True', 'Ready', 'node.kubernetes.io/out-of-service', '0', 'ü☃\u0000\ud800'),
  fc.integer({ min: 250, max: 300 }).map((n) => 'a'.repeat(n)),
);
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null), fc.boolean(), fc.double(), fc.integer(), weirdString, fc.constant(new Date('2026-01-01T00:00:00Z')), fc.constant(new Date(Number.NaN)),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(weirdString, tie('value'), { maxKeys: 4 }),
  ),
})).value;

const meta = { name: 'obj', namespace: 'ns', uid: 'uid-1', resourceVersion: '5', annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } };
const VALID: Record<string, unknown> = {
  pod: { metadata: meta, spec: { nodeName: 'n1', volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c', readOnly: false } }, { name: 'e', ephemeral: {} }, { name: 'i', csi: { driver: 'd' } }, { name: 'ebs', awsElasticBlockStore: { volumeID: 'x' } }] }, status: { phase: 'Running', containerStatuses: [{ state: { running: {} } }] } },
  pvc: { metadata: { ...meta, ownerReferences: [{ uid: 'p', controller: true }] }, spec: { volumeName: 'pv' }, status: { phase: 'Bound' } },
  pv: { metadata: meta, spec: { accessModes: ['ReadWriteOnce'], claimRef: { namespace: 'ns', name: 'c', uid: 'u' }, csi: { driver: 'd', volumeHandle: 'h', readOnly: true } }, status: { phase: 'Bound' } },
  node: { metadata: meta, spec: { taints: [{ key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute' }] }, status: { conditions: [{ type: 'Ready', status: 'True' }], volumesInUse: ['u1'], volumesAttached: [{ name: 'u1', devicePath: '' }] } },
  va: { metadata: { ...meta, deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['f'] }, spec: { attacher: 'd', nodeName: 'n1', source: { persistentVolumeName: 'pv' } }, status: { attached: true, attachError: { message: 'm' } } },
  driver: { metadata: meta, spec: { attachRequired: false } },
  csinode: { metadata: { ...meta, annotations: { 'storage.alpha.kubernetes.io/migrated-plugins': 'kubernetes.io/aws-ebs, x' } } },
  lease: { metadata: meta, spec: { holderIdentity: 'me', leaseDurationSeconds: 15, renewTime: '2026-01-01T00:00:00.000000Z', leaseTransitions: 2 } },
};

/** Paths of every value inside `o` (objects and arrays), root excluded. */
function paths(o: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof o !== 'object' || o === null) return [];
  const out: Array<Array<string | number>> = [];
  for (const [k, v] of Object.entries(o)) {
    const p = [...prefix, Array.isArray(o) ? Number(k) : k];
    out.push(p, ...paths(v, p));
  }
  return out;
}

/** A deep copy of `o` with the value at `path` replaced (or removed when `value` is undefined). */
function replaced(o: unknown, path: Array<string | number>, value: unknown): unknown {
  const copy = structuredClone(o) as Record<string | number, unknown>;
  let cur = copy;
  for (const k of path.slice(0, -1)) cur = cur[k] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  // JSON has no holes: an array element is removed, an object field deleted.
  if (value === undefined && Array.isArray(cur)) cur.splice(Number(last), 1);
  else if (value === undefined) delete cur[last];
  else Object.defineProperty(cur, last, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

function mutated(valid: unknown): fc.Arbitrary<unknown> {
  const ps = paths(valid);
  return fc.tuple(fc.constantFrom(...ps), fc.option(json, { nil: undefined })).map(([p, v]) => replaced(valid, p, v));
}

function checkResult(p: Projected<unknown>, typed: (v: Record<string, unknown>) => void): void {
  if (p.ok) typed(p.value as Record<string, unknown>);
  else assert.ok(typeof p.reason === 'string' && p.reason.length > 0, 'a rejection has a reason');
}

const isStr = (v: unknown) => assert.equal(typeof v, 'string');
const isBool = (v: unknown) => assert.equal(typeof v, 'boolean');
const strArray = (v: unknown) => {
  assert.ok(Array.isArray(v));
  for (const x of v) isStr(x);
};

const CASES: Array<{ kind: string; project: (raw: unknown) => Projected<unknown>; typed: (v: Record<string, unknown>) => void }> = [
  { kind: 'pod', project: projectPod, typed: (v) => { isStr(v.name); isStr(v.uid); isStr(v.nodeName); isBool(v.allContainersNotRunning); for (const vol of v.volumes as Array<Record<string, unknown>>) { isStr(vol.name); isStr(vol.kind); } } },
  { kind: 'pvc', project: projectPvc, typed: (v) => { isStr(v.name); isStr(v.volumeName); isStr(v.phase); } },
  { kind: 'pv', project: projectPv, typed: (v) => { isStr(v.name); strArray(v.accessModes); if (v.csi) isStr((v.csi as { volumeHandle: unknown }).volumeHandle); } },
  {
    kind: 'node', project: projectNode, typed: (v) => {
      isStr(v.name); isBool(v.ready); isBool(v.managed); isBool(v.outOfService); strArray(v.volumesAttached);
      // Read in part: an unreadable volumesInUse is null (not observed), never a shorter list, and is named.
      if (v.volumesInUse === null) assert.match((v.unreadable as string[]).join(';'), /status/);
      else strArray(v.volumesInUse);
      if (v.unreadable !== undefined) strArray(v.unreadable);
      if (v.devicePaths !== undefined) assert.equal((v.devicePaths as unknown[]).length, (v.volumesAttached as unknown[]).length);
    },
  },
  { kind: 'va', project: projectVolumeAttachment, typed: (v) => { isStr(v.name); isStr(v.nodeName); isStr(v.attacher); isBool(v.attached); isBool(v.deleting); } },
  { kind: 'driver', project: projectCsiDriver, typed: (v) => { isStr(v.name); isBool(v.attachRequired); } },
  { kind: 'csinode', project: projectCsiNode, typed: (v) => { isStr(v.name); strArray(v.migratedPlugins); } },
  { kind: 'lease', project: projectLease, typed: (v) => { isStr(v.name); isStr(v.holderIdentity); assert.ok(Number.isInteger(v.leaseDurationSeconds)); } },
];

describe('projections under fuzzing', () => {
  for (const c of CASES) {
    it(`${c.kind}: the valid object projects; arbitrary and mutated inputs never throw`, () => {
      checkResult(c.project(VALID[c.kind]), c.typed);
      assert.ok(c.project(VALID[c.kind]).ok, 'the valid sample is accepted');
      fc.assert(fc.property(fc.oneof(json, mutated(VALID[c.kind])), (raw) => checkResult(c.project(raw), c.typed)), { seed: SEED, numRuns: RUNS });
    });
  }

  it('readMeta (the reflector key) throws nothing but ProjectionError', () => {
    fc.assert(fc.property(fc.oneof(json, mutated(VALID.pod)), fc.boolean(), (raw, namespaced) => {
      try {
        const m = readMeta(raw, namespaced);
        isStr(m.name);
      } catch (err) {
        assert.ok(err instanceof ProjectionError, String(err));
      }
    }), { seed: SEED, numRuns: RUNS });
  });
});
