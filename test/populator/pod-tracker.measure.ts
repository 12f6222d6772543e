/**
 * Measures the pod tracker's hot operations over N pods (default a million), the packed tracker
 * (src/populator/pod-tracker.ts) beside the Map-based reference model (pod-tracker-reference.ts):
 * create + addVolume (a pod's first processing), get (every pod event), setClaims new and
 * unchanged (every processing), the values walk with a get of each (C9), podsOfClaim (C8), delete.
 * Not a test (no assertions; numbers depend on the machine): run it by hand, e.g.
 *   node --expose-gc --max-old-space-size=6000 --import tsx test/populator/pod-tracker.measure.ts 1000000
 * Prints µs of process CPU time per operation (GC included), and the heap and ArrayBuffer bytes
 * each tracker holds after a full collection.
 */
import { PodTracker } from '../../src/populator/pod-tracker.js';
import { ReferencePodTracker } from './pod-tracker-reference.js';

const n = Number(process.argv[2] ?? 1_000_000);
const hex = (i: number, w: number) => i.toString(16).padStart(w, '0');
const uids: string[] = [];
const keys: string[] = [];
const nss: string[] = [];
const nodes: string[] = [];
const vols: string[] = [];
const claims: Array<Array<{ claimName: string }>> = [];
for (let i = 0; i < n; i++) {
  uids.push(`${hex(i * 2654435761 >>> 0, 8)}-1f2e-4d3c-8b9a-${hex(i, 12)}`);
  const ns = `team-${i % 97}`;
  nss.push(ns);
  keys.push(`${ns}/app-${hex(i, 6)}-0`);
  nodes.push(`node-${Math.floor(i / 10)}`);
  vols.push(`kubernetes.io/csi/measure.csi.fleet-attach.io^pvc-${hex(i, 8)}-7a6b-4c5d`);
  claims.push([{ claimName: `data-app-${hex(i, 6)}-0` }]);
}

type Tracker = Pick<PodTracker, 'create' | 'get' | 'delete' | 'podsOfClaim' | 'clearClaims'> & {
  addVolume(t: never, unique: string): void;
  setClaims(podKey: string, namespace: string, volumes: ReadonlyArray<{ readonly claimName?: string }>): unknown;
  values(): IterableIterator<unknown>;
};

function time(label: string, ops: number, fn: () => void): void {
  const t0 = process.cpuUsage();
  fn();
  const d = process.cpuUsage(t0);
  const ms = (d.user + d.system) / 1000;
  console.log(`  ${label.padEnd(26)} ${((ms * 1000) / ops).toFixed(3)} µs/op  (${ms.toFixed(0)} ms)`);
}

function heapUsed(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

function offHeap(): number {
  return process.memoryUsage().arrayBuffers;
}

function run(name: string, make: () => Tracker): void {
  console.log(name);
  const before = heapUsed();
  const buffersBefore = offHeap();
  const t = make();
  time('create + addVolume', n, () => {
    for (let i = 0; i < n; i++) t.addVolume(t.create(uids[i], nss[i], keys[i], nodes[i]) as never, vols[i]);
  });
  time('setClaims (new)', n, () => {
    for (let i = 0; i < n; i++) t.setClaims(keys[i], nss[i], claims[i]);
  });
  const held = heapUsed() - before;
  const buffers = offHeap() - buffersBefore;
  time('setClaims (unchanged)', n, () => {
    for (let i = 0; i < n; i++) t.setClaims(keys[i], nss[i], claims[i]);
  });
  let sink = 0;
  time('get', n, () => {
    for (let i = 0; i < n; i++) sink += (t.get(uids[i]) as { key: string }).key.length;
  });
  time('values walk', n, () => {
    for (const p of t.values()) sink += (p as { uid: string }).uid.length;
  });
  time('podsOfClaim', n, () => {
    for (let i = 0; i < n; i++) sink += t.podsOfClaim(`${nss[i]}/${claims[i][0].claimName}`).length;
  });
  time('clearClaims + delete', n, () => {
    for (let i = 0; i < n; i++) {
      t.clearClaims(keys[i]);
      t.delete(uids[i]);
    }
  });
  console.log(`  held with ${n} pods: heap ${(held / n).toFixed(0)} bytes/pod, ArrayBuffers ${(buffers / n).toFixed(0)} bytes/pod${sink > 0 ? '' : '!'}`);
}

for (let round = 0; round < 2; round++) {
  run('packed', () => new PodTracker() as unknown as Tracker);
  run('reference (Maps)', () => new ReferencePodTracker() as unknown as Tracker);
}
