/**
 * Bad input next to good input: objects the controller cannot use are skipped (a
 * malformed one counted by its reflector, an unusable one logged by the populator), nothing
 * crashes or stalls, and every good pod created before and after them gets its volume
 * attached. The simulated attacher and kubelets run; the controller runs in-process.
 * Names beyond Kubernetes' limits and non-ASCII names never reach the controller: the API
 * server refuses them (422), as kube-apiserver does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FLEET_NAMESPACE, uniqueVolumeName, volumeAttachmentName } from '../../src/sim/actors/index.js';
import { startSimulator, type Simulator } from '../../src/sim/server/index.js';
import type { KubeObject } from '../../src/sim/store/index.js';
import type { Controller } from '../../src/manager/controller.js';
import { node, reflectorOf, startControllerOn, waitFor } from '../controller/harness.js';

const DRIVER = 'sim.csi.fleet-attach.io';
const NS = FLEET_NAMESPACE;
const NODE = 'node-000001';

/** A claim bound to a CSI PV with `handle`, in the fleet namespace. */
function claim(sim: Simulator, pvc: string, pv: string, handle: string, o: { pvSpec?: Record<string, unknown>; pvcStatus?: unknown; pvMeta?: Record<string, unknown> } = {}): void {
  const created = sim.store.create('persistentvolumeclaims', {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: pvc, namespace: NS },
    spec: { accessModes: ['ReadWriteOnce'], volumeName: pv }, status: o.pvcStatus ?? { phase: 'Bound' },
  });
  if (o.pvcStatus === undefined) sim.store.mutate('persistentvolumeclaims', NS, pvc, (c) => { c.status = { phase: 'Bound' }; });
  sim.store.create('persistentvolumes', {
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: pv, ...o.pvMeta },
    spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, claimRef: { namespace: NS, name: pvc, uid: created.metadata.uid }, ...(o.pvSpec ?? { csi: { driver: DRIVER, volumeHandle: handle } }) },
  });
}

function podWith(name: string, volumes: unknown[], extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, ...extra },
    spec: { nodeName: NODE, containers: [{ name: 'c', image: 'i' }], volumes },
    status: { phase: 'Running', containerStatuses: [{ name: 'c', state: { running: {} } }] },
  };
}
const pvcVolume = (claimName: unknown, name = 'v') => ({ name, persistentVolumeClaim: { claimName } });

function attachedAndReported(sim: Simulator, handle: string, nodeName = NODE): boolean {
  const va = sim.store.get('volumeattachments', undefined, volumeAttachmentName(handle, DRIVER, nodeName));
  const n = sim.store.get('nodes', undefined, nodeName) as { status?: { volumesAttached?: Array<{ name: string }> } } | undefined;
  return (va?.status as { attached?: boolean } | undefined)?.attached === true && !va?.metadata.deletionTimestamp
    && (n?.status?.volumesAttached ?? []).some((v) => v.name === uniqueVolumeName(DRIVER, handle));
}

describe('bad input next to good input', { timeout: 120_000 }, () => {
  let sim: Simulator;
  let ctl: Controller;

  before(async () => {
    sim = await startSimulator({ bookmarkIntervalMs: 1000, fleet: { nodes: 2, podsPerNode: 2, seed: 3, attachLatencyMs: 20, detachLatencyMs: 20, mountLatencyMs: 20, unmountLatencyMs: 20 } });
    ctl = await startControllerOn(sim);
    await ctl.acting();
  });
  after(async () => {
    await ctl.stop();
    await sim.stop();
  });

  it('refuses names beyond the limits and non-ASCII names at the API (422), accepts names at the limits', () => {
    const label63 = 'l'.repeat(63);
    const name253 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    assert.equal(name253.length, 253);
    for (const bad of [`${name253}x`, 'pöd-ünicode', 'pod_☃', 'UPPER']) {
      assert.throws(() => sim.store.create('pods', podWith(bad, [])), (err: { code?: number }) => err.code === 422, bad);
    }
    claim(sim, name253, name253, `handle-${label63}`);
    sim.store.create('pods', podWith(name253, [pvcVolume(name253)], { labels: { [label63]: label63 } }));
  });

  it('skips malformed, unresolvable and unattachable objects and counts the malformed ones', async () => {
    const malformedBefore = (r: string) => reflectorOf(ctl, r).stats().malformed;
    const before = Object.fromEntries(['pods', 'persistentvolumes', 'persistentvolumeclaims', 'nodes', 'volumeattachments'].map((r) => [r, malformedBefore(r)]));
    const s = sim.store;
    // Wrong-typed and missing fields.
    s.create('pods', podWith('bad-volumes-map', { v: 1 } as unknown as unknown[]));
    s.create('pods', podWith('bad-claim-number', [pvcVolume(42)]));
    s.create('pods', podWith('bad-volume-no-name', [{ persistentVolumeClaim: { claimName: 'x' } }]));
    s.create('persistentvolumes', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'bad-pv-no-handle' }, spec: { csi: { driver: DRIVER } } });
    s.create('persistentvolumeclaims', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'bad-pvc-phase', namespace: NS }, spec: { volumeName: 7 } });
    s.create('nodes', { ...node('bad-node-conditions'), status: { conditions: 'Ready' } });
    s.create('volumeattachments', { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: 'bad-va-no-spec' } });
    // Well-formed but unusable.
    claim(sim, 'dup-claim', 'pv-dup', 'handle-dup');
    s.create('pods', podWith('same-claim-twice', [pvcVolume('dup-claim', 'a'), pvcVolume('dup-claim', 'b')]));
    claim(sim, 'nfs-claim', 'pv-nfs', 'unused', { pvSpec: { nfs: { server: 'nfs.example', path: '/x' } } });
    s.create('pods', podWith('uses-nfs', [pvcVolume('nfs-claim')]));
    claim(sim, 'ebs-claim', 'pv-ebs', 'unused', { pvSpec: { awsElasticBlockStore: { volumeID: 'vol-0abc', fsType: 'ext4' } } });
    s.create('pods', podWith('uses-ebs', [pvcVolume('ebs-claim')]));
    s.create('persistentvolumeclaims', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'missing-pv-claim', namespace: NS }, spec: { volumeName: 'pv-does-not-exist' }, status: { phase: 'Bound' } });
    s.create('pods', podWith('uses-missing-pv', [pvcVolume('missing-pv-claim')]));
    s.create('pods', podWith('uses-missing-claim', [pvcVolume('no-such-claim')]));
    s.create('pods', { ...podWith('on-missing-node', [pvcVolume('dup-claim')]), spec: { nodeName: 'node-nowhere', containers: [], volumes: [pvcVolume('dup-claim')] } });
    s.create('volumeattachments', { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: 'va-unknown-pv' }, spec: { attacher: DRIVER, nodeName: NODE, source: { persistentVolumeName: 'pv-unknown' } } });
    // Non-ASCII and huge values where the API allows them.
    claim(sim, 'unicode-claim', 'pv-unicode', 'vol-ünïcödé-☃', { pvMeta: { annotations: { note: 'ünïcödé ☃ '.repeat(100) } } });
    s.create('pods', podWith('huge-annotations', [pvcVolume('unicode-claim')], { annotations: { huge: 'x'.repeat(512 << 10), 'ünïcode/key-ish': 'ö' } }));

    await waitFor('malformed objects counted', () => {
      const d = (r: string) => malformedBefore(r) - before[r];
      return d('pods') >= 3 && d('persistentvolumes') >= 1 && d('persistentvolumeclaims') >= 1 && d('nodes') >= 1 && d('volumeattachments') >= 1;
    });
    // A node with an unreadable part is counted with the malformed objects but present, at the
    // part's safe value (conditions unreadable: Ready, so no forced detach).
    await waitFor('the node read in part present and healthy', () => {
      const partial = ctl.state.findNode('bad-node-conditions');
      return partial !== undefined && ctl.state.node(partial)?.healthy === true;
    });
    await waitFor('the claim used twice attached once', () => attachedAndReported(sim, 'handle-dup'));
    await waitFor('the unicode handle with huge annotations attached', () => attachedAndReported(sim, 'vol-ünïcödé-☃'));
    const pvOf = (v: KubeObject) => (v.spec as { source?: { persistentVolumeName?: string } } | undefined)?.source?.persistentVolumeName ?? '';
    const vas = sim.store.list('volumeattachments');
    assert.equal(vas.filter((v) => pvOf(v) === 'pv-dup').length, 1, 'one VolumeAttachment for a claim listed twice');
    assert.ok(!vas.some((v) => ['pv-nfs', 'pv-does-not-exist'].includes(pvOf(v))), 'nothing attached for NFS or a missing PV');
    assert.ok(sim.store.get('volumeattachments', undefined, 'va-unknown-pv'), 'a VolumeAttachment of an unknown PV is left alone');
  });

  it('still attaches every good volume, the one named at the limits and one created after the bad input', async () => {
    claim(sim, 'after-claim', 'pv-after', 'handle-after');
    sim.store.create('pods', podWith('good-after', [pvcVolume('after-claim')]));
    const name253 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    await waitFor('the pod created after the bad input attached', () => attachedAndReported(sim, 'handle-after'), 30_000);
    await waitFor('the names at the limits attached', () => attachedAndReported(sim, `handle-${'l'.repeat(63)}`), 30_000);
    const generated = sim.store.list('pods', NS).filter((p) => /^pod-\d{6}-\d{2}$/.test(p.metadata.name));
    assert.equal(generated.length, 4);
    for (const p of generated) {
      const handle = (sim.store.get('persistentvolumes', undefined, p.metadata.name.replace(/^pod-/, 'pv-'))?.spec as { csi: { volumeHandle: string } }).csi.volumeHandle;
      await waitFor(`${p.metadata.name} attached`, () => attachedAndReported(sim, handle, (p.spec as { nodeName: string }).nodeName), 30_000);
    }
  });

  it('detaches the claim listed twice once its pod is gone', async () => {
    sim.store.delete('pods', NS, 'same-claim-twice', { gracePeriodSeconds: 0 });
    sim.store.delete('pods', NS, 'on-missing-node', { gracePeriodSeconds: 0 });
    await waitFor('detached', () => !sim.store.get('volumeattachments', undefined, volumeAttachmentName('handle-dup', DRIVER, NODE)), 30_000);
  });
});
