/**
 * The invariant checker against deliberately bad (and good) sequences of changes on a bare
 * simulator store: no controller, no actors; the test plays every part, with a fake clock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createInvariantChecker, type InvariantChecker, type ViolationKind } from '../../src/invariants/index.js';
import { createSimStore, type ServableStore, type KubeObject } from '../../src/sim/store/index.js';
import { DRIVER, createVolumeAndPod, node, pod, uniqueName, vaName } from '../controller/harness.js';

const NS = 'default';
const MAX_WAIT = 30_000;

interface World {
  store: ServableStore;
  checker: InvariantChecker;
  clock: { now: number };
  advance(ms: number): void;
}

function world(): World {
  const store = createSimStore();
  const clock = { now: 1_000_000 };
  for (const n of ['node-a', 'node-b']) store.create('nodes', node(n));
  const checker = createInvariantChecker({ store, maxWaitForUnmountMs: MAX_WAIT, convergenceBoundMs: 60_000, now: () => clock.now });
  return { store, checker, clock, advance: (ms) => void (clock.now += ms) };
}

function createVa(store: ServableStore, handle: string, nodeName: string, o: { name?: string; finalizer?: boolean } = {}): string {
  const name = o.name ?? vaName(handle, nodeName);
  store.create('volumeattachments', {
    apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment',
    metadata: { name, ...(o.finalizer ? { finalizers: ['external-attacher/test'] } : {}) },
    spec: { attacher: DRIVER, nodeName, source: { persistentVolumeName: `pv-${handle}` } },
  });
  return name;
}

const setAttached = (store: ServableStore, name: string) => store.mutate('volumeattachments', undefined, name, (va) => { va.status = { attached: true }; });
const setNodeVolumes = (store: ServableStore, nodeName: string, field: 'volumesAttached' | 'volumesInUse', handles: string[]) =>
  store.mutate('nodes', undefined, nodeName, (n) => {
    (n.status as Record<string, unknown>)[field] = field === 'volumesInUse' ? handles.map(uniqueName) : handles.map((h) => ({ name: uniqueName(h), devicePath: '' }));
  });

/** A volume attached, reported and mounted on a node for pod `pod-<handle>`, as a correct controller leaves it. */
function attachedAndMounted(w: World, handle: string, nodeName: string, o: { rwx?: boolean } = {}): string {
  createVolumeAndPod(w.store, NS, handle, { nodeName, ...(o.rwx ? { rwx: true } : {}) });
  const va = createVa(w.store, handle, nodeName, { finalizer: true });
  setAttached(w.store, va);
  setNodeVolumes(w.store, nodeName, 'volumesAttached', [handle]);
  setNodeVolumes(w.store, nodeName, 'volumesInUse', [handle]);
  return va;
}

function kinds(c: InvariantChecker): ViolationKind[] {
  return c.violations().map((v) => v.kind);
}

describe('invariant checker: a correct sequence', () => {
  it('stays quiet through attach, mount, pod move (unmount, unreport, detach) and re-attach, and reports convergence', () => {
    const w = world();
    const vaA = attachedAndMounted(w, 'v1', 'node-a');
    // The pod goes away: kubelet unmounts, the controller unreports, then detaches.
    w.store.delete('pods', NS, 'pod-v1', { gracePeriodSeconds: 0 });
    setNodeVolumes(w.store, 'node-a', 'volumesInUse', []);
    setNodeVolumes(w.store, 'node-a', 'volumesAttached', []);
    w.store.delete('volumeattachments', undefined, vaA);
    w.store.mutate('volumeattachments', undefined, vaA, (va) => { va.metadata.finalizers = []; });
    assert.equal(w.store.get('volumeattachments', undefined, vaA), undefined, 'the VA is gone once its finalizer is removed');
    // It comes back on node-b.
    w.store.create('pods', pod(NS, 'pod-v1', 'node-b', ['pvc-v1']));
    assert.equal(w.checker.convergence().converged, false);
    const vaB = createVa(w.store, 'v1', 'node-b');
    setAttached(w.store, vaB);
    setNodeVolumes(w.store, 'node-b', 'volumesAttached', ['v1']);
    // A mounted volume on an out-of-service node may go at once; a mounted one on an unhealthy node after the timer.
    const vaOos = attachedAndMounted(w, 'v2', 'node-a');
    w.store.mutate('nodes', undefined, 'node-a', (n) => { n.spec = { taints: [{ key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute' }] }; });
    w.store.delete('pods', NS, 'pod-v2', { gracePeriodSeconds: 0 });
    setNodeVolumes(w.store, 'node-a', 'volumesAttached', []);
    w.store.delete('volumeattachments', undefined, vaOos);
    const vaLate = attachedAndMounted(w, 'v3', 'node-b');
    w.store.mutate('nodes', undefined, 'node-b', (n) => { (n.status as Record<string, unknown>).conditions = [{ type: 'Ready', status: 'Unknown' }]; });
    w.store.delete('pods', NS, 'pod-v3', { gracePeriodSeconds: 0 });
    w.advance(MAX_WAIT + 1);
    setNodeVolumes(w.store, 'node-b', 'volumesAttached', ['v1']);
    w.store.delete('volumeattachments', undefined, vaLate);
    w.store.mutate('volumeattachments', undefined, vaLate, (va) => { va.metadata.finalizers = []; });
    w.store.mutate('volumeattachments', undefined, vaOos, (va) => { va.metadata.finalizers = []; });
    w.checker.faultsStopped();
    const c = w.checker.convergence();
    assert.deepEqual(kinds(w.checker), []);
    assert.deepEqual({ desired: c.desired, attached: c.attached, stray: c.strayAttachments + c.strayReports, converged: c.converged }, { desired: 1, attached: 1, stray: 0, converged: true });
    assert.deepEqual(w.checker.operations(), { attaches: 4, detaches: 3 });
    w.checker.stop();
  });

  it('lets a ReadWriteMany volume be attached to two nodes', () => {
    const w = world();
    attachedAndMounted(w, 'shared', 'node-a', { rwx: true });
    w.store.create('pods', pod(NS, 'pod-shared-2', 'node-b', ['pvc-shared']));
    setAttached(w.store, createVa(w.store, 'shared', 'node-b'));
    assert.deepEqual(kinds(w.checker), []);
    w.checker.stop();
  });
});

describe('invariant checker: deliberately bad sequences', () => {
  it('(a) catches a ReadWriteOnce volume with VolumeAttachments on two nodes, also while the first is being deleted', () => {
    const w = world();
    attachedAndMounted(w, 'rwo', 'node-a');
    createVa(w.store, 'rwo', 'node-b');
    assert.deepEqual(kinds(w.checker), ['multi-attach']);
    const v = w.checker.violations()[0];
    assert.equal(v.volume, uniqueName('rwo'));
    assert.deepEqual([...v.nodes].sort(), ['node-a', 'node-b']);

    const w2 = world();
    const first = attachedAndMounted(w2, 'rwo', 'node-a');
    setNodeVolumes(w2.store, 'node-a', 'volumesInUse', []);
    setNodeVolumes(w2.store, 'node-a', 'volumesAttached', []);
    w2.store.delete('pods', NS, 'pod-rwo', { gracePeriodSeconds: 0 });
    w2.store.delete('volumeattachments', undefined, first); // finalizer: still there, being deleted
    createVa(w2.store, 'rwo', 'node-b');
    assert.deepEqual(kinds(w2.checker), ['multi-attach'], 'a detach in progress does not free the volume yet');
    w.checker.stop();
    w2.checker.stop();
  });

  it('(b) catches a detach of a mounted volume on a healthy node, before the timer, without the taint', () => {
    const w = world();
    const va = attachedAndMounted(w, 'm1', 'node-a');
    setNodeVolumes(w.store, 'node-a', 'volumesAttached', []);
    w.store.delete('volumeattachments', undefined, va);
    assert.deepEqual(kinds(w.checker), ['detach-while-mounted'], 'still wanted by its pod');
    assert.match(w.checker.violations()[0].detail, /healthy node and still wanted/);

    const w2 = world();
    const va2 = attachedAndMounted(w2, 'm2', 'node-a');
    w2.store.delete('pods', NS, 'pod-m2', { gracePeriodSeconds: 0 });
    w2.advance(MAX_WAIT - 1000);
    setNodeVolumes(w2.store, 'node-a', 'volumesAttached', []);
    w2.store.delete('volumeattachments', undefined, va2);
    assert.deepEqual(kinds(w2.checker), ['detach-while-mounted'], 'unwanted but mounted, timer not expired');

    const w3 = world();
    const va3 = attachedAndMounted(w3, 'm3', 'node-b');
    w3.store.delete('nodes', undefined, 'node-b');
    w3.store.delete('pods', NS, 'pod-m3', { gracePeriodSeconds: 0 });
    w3.advance(1000);
    w3.store.delete('volumeattachments', undefined, va3);
    assert.deepEqual(kinds(w3.checker), ['detach-while-mounted'], 'a deleted node keeps its last volumesInUse (D4)');
    assert.match(w3.checker.violations()[0].detail, /deleted node/);
    for (const x of [w, w2, w3]) x.checker.stop();
  });

  it('(c) catches volumesAttached listing a volume with no VolumeAttachment, an unattached one, or one being deleted', () => {
    const w = world();
    createVolumeAndPod(w.store, NS, 'c1', { nodeName: 'node-a' });
    setNodeVolumes(w.store, 'node-a', 'volumesAttached', ['c1']);
    createVa(w.store, 'c2', 'node-b');
    createVolumeAndPod(w.store, NS, 'c2', { nodeName: 'node-b' });
    setNodeVolumes(w.store, 'node-b', 'volumesAttached', ['c2']);
    const va3 = attachedAndMounted(w, 'c3', 'node-a');
    setNodeVolumes(w.store, 'node-a', 'volumesInUse', []);
    w.store.delete('pods', NS, 'pod-c3', { gracePeriodSeconds: 0 });
    w.store.delete('volumeattachments', undefined, va3); // still listed on node-a: Q1 broken
    const details = w.checker.violations().map((v) => `${v.kind} ${v.volume.split('^')[1]}: ${v.detail}`);
    assert.deepEqual(details, [
      'reported-not-attached c1: listed in volumesAttached but has no VolumeAttachment',
      'reported-not-attached c2: listed in volumesAttached but has a VolumeAttachment that is not attached',
      'reported-not-attached c3: listed in volumesAttached but has a VolumeAttachment being deleted',
    ]);
    w.checker.stop();
  });

  it('(d) catches two VolumeAttachments for the same volume and node', () => {
    const w = world();
    createVolumeAndPod(w.store, NS, 'd1', { nodeName: 'node-a', rwx: true });
    createVa(w.store, 'd1', 'node-a');
    createVa(w.store, 'd1', 'node-a', { name: 'csi-other-name' });
    assert.deepEqual(kinds(w.checker), ['duplicate-attachment']);
    w.checker.stop();
  });

  it('(e) catches a desired pair not attached within the bound after faults stop', () => {
    const w = world();
    createVolumeAndPod(w.store, NS, 'e1', { nodeName: 'node-a' });
    w.checker.faultsStopped();
    assert.equal(w.checker.convergence().pending.length, 1);
    w.advance(59_000);
    w.checker.convergence();
    assert.deepEqual(kinds(w.checker), [], 'within the bound');
    w.advance(2000);
    const c = w.checker.convergence();
    w.checker.convergence();
    assert.deepEqual(kinds(w.checker), ['not-converged'], 'reported once');
    assert.equal(c.converged, false);
    assert.match(c.pending[0], /e1 on node-a/);
    w.checker.stop();
  });

  it('starts from an already populated store and checks what it finds', () => {
    const store = createSimStore();
    store.create('nodes', node('node-a'));
    createVolumeAndPod(store, NS, 'pre', { nodeName: 'node-a' });
    store.mutate('nodes', undefined, 'node-a', (n: KubeObject) => { (n.status as Record<string, unknown>).volumesAttached = [{ name: uniqueName('pre'), devicePath: '' }]; });
    const checker = createInvariantChecker({ store, maxWaitForUnmountMs: MAX_WAIT });
    assert.deepEqual(kinds(checker), ['reported-not-attached']);
    checker.stop();
  });
});
