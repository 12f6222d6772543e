/**
 * Measures what the packed store costs against a Map of the objects: `get` of a pod, a PV and a
 * VolumeAttachment among 100k of each, a full `values()` walk, upserts (new objects, and updates
 * that change nothing the projection keeps), and the heap each holds. Not a test (no assertions;
 * numbers depend on the machine): run it by hand, e.g.
 *   node --expose-gc --import tsx test/kube/packed-store.measure.ts 100000 1000000
 */
import { PackedStore } from '../../src/kube/packed-store.js';
import { ProjectionStore, type ProjectionCache } from '../../src/kube/projection-store.js';
import { POD_KIND, PV_KIND, VOLUME_ATTACHMENT_KIND, type PodRecord, type PvRecord, type ResourceKind, type VolumeAttachmentRecord } from '../../src/kube/projections/index.js';
import { logger } from '../../src/log/logger.js';

const N = Number(process.argv[2] ?? 100_000);
const UPSERTS = Number(process.argv[3] ?? 1_000_000);
const log = logger('measure');
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

const hex = (i: number, n: number) => i.toString(16).padStart(n, '0');
const uid = (i: number) => `${hex(i, 8)}-1b2c-4d3e-8f40-${hex(i * 7919, 12)}`;
function podOf(i: number): PodRecord {
  return {
    uid: uid(i), namespace: `ns-${i % 50}`, name: `app-${hex(i, 6)}-x7k2p`, nodeName: `node-${i % 10_000}`, phase: 'Running', allContainersNotRunning: false,
    volumes: [
      { name: 'data', kind: 'pvc', claimName: `data-app-${hex(i, 6)}`, sourceType: 'persistentVolumeClaim' },
      { name: 'kube-api-access', kind: 'other', sourceType: 'projected' },
    ],
  };
}
function pvOf(i: number): PvRecord {
  return {
    name: `pvc-${uid(i)}`, phase: 'Bound', accessModes: ['ReadWriteOnce'],
    claimRef: { namespace: `ns-${i % 50}`, name: `data-app-${hex(i, 6)}`, uid: uid(i + 1) },
    csi: { driver: 'ebs.csi.aws.com', volumeHandle: `vol-${hex(i, 17)}`, readOnly: false },
  };
}
function vaOf(i: number): VolumeAttachmentRecord {
  return { name: `csi-${hex(i, 64)}`, attacher: 'ebs.csi.aws.com', nodeName: `node-${i % 10_000}`, pvName: `pvc-${uid(i)}`, inline: false, attached: true, deleting: false };
}
const keyOf = <T>(kind: ResourceKind<T>, v: T) => {
  const o = v as { namespace?: string; name: string };
  return kind.namespaced ? `${o.namespace}/${o.name}` : o.name;
};

function time(label: string, n: number, fn: () => void): void {
  const t0 = performance.now();
  fn();
  const ms = performance.now() - t0;
  console.log(`${label.padEnd(44)} ${ms.toFixed(0).padStart(6)} ms  ${((ms * 1000) / n).toFixed(3).padStart(8)} µs/op`);
}

function measureKind<T>(name: string, kind: ResourceKind<T>, make: (i: number) => T): void {
  for (const packed of [false, true]) {
    const label = `${name} ${packed ? 'packed' : 'map   '}`;
    gc();
    const h0 = process.memoryUsage().heapUsed;
    const store: ProjectionCache<T> = packed ? new PackedStore(log, kind.codec!) : new ProjectionStore(log, kind.keepFrom);
    const keys = new Array<string>(N);
    for (let i = 0; i < N; i++) keys[i] = keyOf(kind, make(i));
    time(`${label} upsert ${N} new`, N, () => {
      for (let i = 0; i < N; i++) store.upsert(keys[i]!, make(i), String(i + 1));
    });
    gc();
    const held = process.memoryUsage().heapUsed - h0;
    let sink = 0;
    time(`${label} get x${N}`, N, () => {
      for (let i = 0; i < N; i++) sink += (store.get(keys[(i * 7919) % N]!) as { name: string }).name.length;
    });
    time(`${label} values() walk of ${N}`, N, () => {
      for (const v of store.values()) sink += (v as { name: string }).name.length;
    });
    time(`${label} unchanged update x${N}`, N, () => {
      for (let i = 0; i < N; i++) store.upsert(keys[i]!, make(i), String(N + i + 1));
    });
    console.log(`${label} heap held (incl. the key array) ${(held / N).toFixed(0)} B/object  (sink ${sink % 10})`);
  }
}

measureKind('pod', POD_KIND, podOf);
measureKind('pv ', PV_KIND, pvOf);
measureKind('va ', VOLUME_ATTACHMENT_KIND, vaOf);

// A cold start's adds: UPSERTS pods into an empty store, with an add handler (as the populator has).
for (const packed of [false, true]) {
  gc();
  const store: ProjectionCache<PodRecord> = packed ? new PackedStore(log, POD_KIND.codec!) : new ProjectionStore(log, POD_KIND.keepFrom);
  let adds = 0;
  store.addHandler({ add: () => adds++ });
  time(`pods ${packed ? 'packed' : 'map   '} upsert ${UPSERTS} (make + store)`, UPSERTS, () => {
    for (let i = 0; i < UPSERTS; i++) {
      const p = podOf(i);
      store.upsert(`${p.namespace}/${p.name}`, p, String(i + 1));
    }
  });
  if (adds !== UPSERTS) throw new Error('missed adds');
}
time(`pods: make ${UPSERTS} projections and keys only`, UPSERTS, () => {
  let s = 0;
  for (let i = 0; i < UPSERTS; i++) {
    const p = podOf(i);
    s += `${p.namespace}/${p.name}`.length;
  }
  if (s < 0) console.log(s);
});
