/**
 * The scale-out bench's checker on synthetic committed-change streams: each invariant fires on
 * a stream that breaks it, and a clean stream of the same shape (a replica attaching and then
 * detaching as the rules say) records nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createBucketHolders } from '../../bench/lib/scale-out/bucket-holders.js';
import { createChaosChecker, type ChaosChecker, type ObservedChange, type Writer } from '../../bench/lib/scale-out/checker.js';
import { bucketOf } from '../../src/sharding/index.js';

const B = 8;
const DRIVER = 'd.csi';
const u = (pv: string) => `kubernetes.io/csi/${DRIVER}^h-${pv}`;
// Two nodes in different buckets.
const N1 = 'node-a';
const N2 = ['node-b', 'node-c', 'node-d', 'node-e', 'node-f'].find((n) => bucketOf(n, B) !== bucketOf(N1, B))!;

/** A stream builder: each call commits one change at the next resourceVersion. */
function stream(opts: { maxWaitMs?: number } = {}) {
  const holders = createBucketHolders(B);
  const checker = createChaosChecker({ holders, isReplica: (x) => /^r\d+$/.test(x), maxWaitForUnmountMs: opts.maxWaitMs ?? 60_000 });
  let rv = 0;
  let at = 0;
  const commit = (c: Omit<ObservedChange, 'rv' | 'at'>) => checker.apply({ ...c, rv: ++rv, at });
  const sim: Writer = { user: 'system:simulator', verb: 'update' };
  const s = {
    checker,
    advance(ms: number) {
      at += ms;
    },
    lease(node: string, holder: string) {
      commit({ type: 'MODIFIED', resource: 'leases', namespace: 'kube-system', name: `fleet-attach-b-${String(bucketOf(node, B)).padStart(4, '0')}`, object: { spec: { holderIdentity: holder } }, writer: { user: holder || 'r0', verb: 'update' } });
    },
    pv(name: string, modes = ['ReadWriteOnce']) {
      commit({ type: 'ADDED', resource: 'persistentvolumes', name, object: { spec: { accessModes: modes, csi: { driver: DRIVER, volumeHandle: `h-${name}` } } }, writer: sim });
      commit({ type: 'ADDED', resource: 'persistentvolumeclaims', namespace: 'fleet', name: `c-${name}`, object: { spec: { volumeName: name } }, writer: sim });
    },
    node(name: string, st: { inUse?: string[]; attached?: string[]; ready?: boolean; oos?: boolean } = {}, writer: Writer = sim) {
      commit({
        type: 'MODIFIED', resource: 'nodes', name, writer,
        object: {
          spec: { taints: st.oos ? [{ key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute' }] : [] },
          status: { volumesInUse: st.inUse ?? [], volumesAttached: (st.attached ?? []).map((x) => ({ name: x, devicePath: '' })), conditions: [{ type: 'Ready', status: st.ready === false ? 'Unknown' : 'True' }] },
        },
      });
    },
    pod(name: string, node: string, pv: string, live = true) {
      commit({ type: live ? 'ADDED' : 'DELETED', resource: 'pods', namespace: 'fleet', name, object: { spec: { nodeName: node, volumes: [{ persistentVolumeClaim: { claimName: `c-${pv}` } }] }, status: { phase: 'Running' } }, writer: sim });
    },
    va(name: string, node: string, pv: string, st: { type?: ObservedChange['type']; attached?: boolean; deleting?: boolean; writer?: Writer } = {}) {
      commit({
        type: st.type ?? 'MODIFIED', resource: 'volumeattachments', name, writer: st.writer ?? sim,
        object: { metadata: { name, ...(st.deleting ? { deletionTimestamp: 'x' } : {}) }, spec: { nodeName: node, source: { persistentVolumeName: pv } }, status: { attached: st.attached ?? false } },
      });
    },
  };
  return s;
}

const kinds = (c: ChaosChecker) => c.violations().map((v) => v.invariant);

/** A replica r1 holding N1's bucket attaches pv-1 there, the kubelet mounts, then all is undone in order. */
function cleanEpisode(s: ReturnType<typeof stream>) {
  s.lease(N1, 'r1');
  s.pv('pv-1');
  s.node(N1);
  s.pod('p1', N1, 'pv-1');
  s.va('va-1', N1, 'pv-1', { type: 'ADDED', writer: { user: 'r1', verb: 'create' } });
  s.va('va-1', N1, 'pv-1', { attached: true });
  s.node(N1, { attached: [u('pv-1')] }, { user: 'r1', verb: 'patch', subresource: 'status' });
  s.node(N1, { attached: [u('pv-1')], inUse: [u('pv-1')] });
}

function cleanDetach(s: ReturnType<typeof stream>) {
  s.pod('p1', N1, 'pv-1', false);
  s.node(N1, { attached: [u('pv-1')] });
  s.node(N1, {}, { user: 'r1', verb: 'patch', subresource: 'status' });
  s.va('va-1', N1, 'pv-1', { attached: true, deleting: true, writer: { user: 'r1', verb: 'delete' } });
  s.va('va-1', N1, 'pv-1', { type: 'DELETED', attached: true, deleting: true });
}

describe('scale-out chaos checker', () => {
  it('records nothing on a clean attach and detach, and judges every replica write', () => {
    const s = stream();
    cleanEpisode(s);
    assert.equal(s.checker.convergence().converged, true);
    cleanDetach(s);
    assert.deepEqual(s.checker.violations(), []);
    assert.equal(s.checker.checked().replicaWrites, 4);
    assert.equal(s.checker.checked().deletions, 1);
    assert.equal(s.checker.convergence().converged, true);
  });

  it('I1: a ReadWriteOnce volume with VolumeAttachments on two nodes', () => {
    const s = stream();
    cleanEpisode(s);
    s.lease(N2, 'r2');
    s.va('va-2', N2, 'pv-1', { type: 'ADDED', writer: { user: 'r2', verb: 'create' } });
    assert.deepEqual(kinds(s.checker), ['I1']);
    const v = s.checker.violations()[0]!;
    assert.equal(v.node, N2);
    assert.equal(v.volume, u('pv-1'));
    assert.equal(v.writer, 'r2');
  });

  it('I1 stays silent for a ReadWriteMany volume, and for two attachments both being deleted', () => {
    const s = stream();
    s.lease(N1, 'r1');
    s.lease(N2, 'r1');
    s.pv('pv-x', ['ReadWriteMany']);
    s.va('va-x1', N1, 'pv-x', { type: 'ADDED', writer: { user: 'r1', verb: 'create' } });
    s.va('va-x2', N2, 'pv-x', { type: 'ADDED', writer: { user: 'r1', verb: 'create' } });
    s.pv('pv-y');
    s.va('va-y1', N1, 'pv-y', { type: 'ADDED', deleting: true });
    s.va('va-y2', N2, 'pv-y', { type: 'ADDED', deleting: true });
    assert.deepEqual(s.checker.violations(), []);
  });

  it('I2: a node status write or an attachment by a replica not holding the node\'s bucket', () => {
    const s = stream();
    s.lease(N1, 'r1');
    s.pv('pv-1');
    s.node(N1, {}, { user: 'r2', verb: 'patch', subresource: 'status' });
    s.va('va-1', N1, 'pv-1', { type: 'ADDED', writer: { user: 'r2', verb: 'create' } });
    assert.deepEqual(kinds(s.checker), ['I2', 'I2']);
    // After the bucket moves to r2 (as committed), the same writes are its own.
    s.lease(N1, 'r2');
    s.node(N1, {}, { user: 'r2', verb: 'patch', subresource: 'status' });
    assert.equal(s.checker.counts().I2, 2);
    // A free bucket has no holder: a write then is a violation too.
    s.lease(N1, '');
    s.node(N1, {}, { user: 'r2', verb: 'patch', subresource: 'status' });
    assert.equal(s.checker.counts().I2, 3);
  });

  it('I3 and I4: a deletion committed while the volume is mounted, and while it is still reported attached', () => {
    const s = stream();
    cleanEpisode(s);
    s.va('va-1', N1, 'pv-1', { attached: true, deleting: true, writer: { user: 'r1', verb: 'delete' } });
    assert.deepEqual(kinds(s.checker).sort(), ['I3', 'I4']);
    assert.ok(s.checker.violations().every((v) => v.node === N1 && v.writer === 'r1' && v.volume === u('pv-1')));
  });

  it('I4 alone: mounted no more, but still in volumesAttached', () => {
    const s = stream();
    cleanEpisode(s);
    s.node(N1, { attached: [u('pv-1')] });
    s.va('va-1', N1, 'pv-1', { type: 'DELETED', attached: true, writer: { user: 'r1', verb: 'delete' } });
    assert.deepEqual(kinds(s.checker), ['I4']);
  });

  it('forced detaches are exempt and counted: out-of-service taint, or NotReady past the max wait', () => {
    const s = stream({ maxWaitMs: 20_000 });
    cleanEpisode(s);
    s.node(N1, { attached: [u('pv-1')], inUse: [u('pv-1')], oos: true });
    s.va('va-1', N1, 'pv-1', { attached: true, deleting: true, writer: { user: 'r1', verb: 'delete' } });
    s.va('va-1', N1, 'pv-1', { type: 'DELETED' });
    assert.equal(s.checker.forcedDetaches(), 1);
    s.pv('pv-2');
    s.va('va-2', N1, 'pv-2', { type: 'ADDED', attached: true, writer: { user: 'r1', verb: 'create' } });
    // The taint goes, the node stays NotReady: the taint's grace (10 s) passes, the max wait not yet.
    s.node(N1, { inUse: [u('pv-2')], ready: false });
    s.advance(11_000);
    s.va('va-2', N1, 'pv-2', { attached: true, deleting: true, writer: { user: 'r1', verb: 'delete' } });
    assert.deepEqual(kinds(s.checker), ['I3']);
    s.va('va-2', N1, 'pv-2', { type: 'DELETED' });
    s.va('va-3', N1, 'pv-2', { type: 'ADDED', attached: true, writer: { user: 'r1', verb: 'create' } });
    s.advance(10_000);
    s.va('va-3', N1, 'pv-2', { attached: true, deleting: true, writer: { user: 'r1', verb: 'delete' } });
    assert.deepEqual(kinds(s.checker), ['I3']);
    assert.equal(s.checker.forcedDetaches(), 2);
  });

  it('I5: a second successful create of one VolumeAttachment without a deletion between', () => {
    const s = stream();
    cleanEpisode(s);
    s.va('va-1', N1, 'pv-1', { type: 'ADDED', writer: { user: 'r1', verb: 'create' } });
    assert.deepEqual(kinds(s.checker), ['I5']);
    // After a deletion, a create starts a new episode.
    s.node(N1, {});
    s.va('va-1', N1, 'pv-1', { type: 'DELETED' });
    s.va('va-1', N1, 'pv-1', { type: 'ADDED', writer: { user: 'r1', verb: 'create' } });
    assert.equal(s.checker.counts().I5, 1);
  });

  it('I6: convergence needs every desired pair attached and reported, and nothing stray', () => {
    const s = stream();
    s.lease(N1, 'r1');
    s.pv('pv-1');
    s.node(N1);
    s.pod('p1', N1, 'pv-1');
    assert.equal(s.checker.convergence().converged, false);
    assert.deepEqual(s.checker.convergence().pending, [`${u('pv-1')} on ${N1}`]);
    s.va('va-1', N1, 'pv-1', { type: 'ADDED', attached: true, writer: { user: 'r1', verb: 'create' } });
    assert.equal(s.checker.convergence().converged, false, 'not yet in volumesAttached');
    s.node(N1, { attached: [u('pv-1')] }, { user: 'r1', verb: 'patch', subresource: 'status' });
    assert.equal(s.checker.convergence().converged, true);
    s.pv('pv-2');
    s.va('va-2', N1, 'pv-2', { type: 'ADDED', attached: true, writer: { user: 'r1', verb: 'create' } });
    const c = s.checker.convergence();
    assert.equal(c.converged, false);
    assert.equal(c.strayAttachments, 1);
    // A ReadWriteOnce claim wanted on two nodes is a conflict, left out of the desired pairs.
    s.lease(N2, 'r1');
    s.node(N2);
    s.pod('p2', N2, 'pv-1');
    assert.equal(s.checker.convergence().desired, 0);
    s.checker.record({ invariant: 'I6', rv: 99, node: N1, volume: u('pv-2'), writer: '', detail: 'not converged' });
    assert.equal(s.checker.counts().I6, 1);
  });
});
