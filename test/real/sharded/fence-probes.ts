/**
 * The data-level fences of docs/scale-out.md, tried directly on the real kube-apiserver with the
 * project's own calls (KubeApiClient, the VolumeLock, the BucketLeases) under a replica-like
 * identity, on objects of their own (a node, a VolumeAttachment, a PersistentVolume and a
 * bucket Lease that no replica or fleet actor touches, removed afterwards):
 *
 * - a node status compare-and-swap from a stale expected list is refused (422) and changes nothing;
 * - a VolumeAttachment delete with a wrong uid precondition is refused (409) and the object stays;
 * - the PV attach lock taken from a stale read is refused (its resourceVersion `test`, 422);
 * - a bucket Lease claim from a stale resourceVersion is refused (409), and so is a create of
 *   one that exists.
 *
 * Each probe returns what it saw; the test asserts on it, and finds the refusals again in the
 * audit log under the probe's user.
 */
import { spawnSync } from 'node:child_process';
import type { KubeApiClient, PersistentVolumeMeta } from '../../../src/kube/api-client.js';
import { statusCodeOf } from '../../../src/kube/kube-errors.js';
import { createBucketLeases } from '../../../src/sharding/bucket-leases.js';
import { ATTACH_LOCK_ANNOTATION, createVolumeLock, parseLockValue } from '../../../src/sharding/volume-lock.js';

export const PROBE_NODE = 'fence-probe-node';
export const PROBE_PV = 'fence-probe-pv';
export const PROBE_VA = 'fence-probe-va';
const PROBE_ATTACHER = 'probe.csi.fleet-attach.io';

function kubectl(kubeconfig: string, args: readonly string[], input?: string): string {
  const r = spawnSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', input });
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/** Creates the probes' node, PV and VolumeAttachment (admin); returns the VolumeAttachment's uid. */
export function createProbeObjects(admin: string): string {
  const objects = [
    { apiVersion: 'v1', kind: 'Node', metadata: { name: PROBE_NODE } },
    {
      apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: PROBE_PV },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', csi: { driver: PROBE_ATTACHER, volumeHandle: 'probe-handle' } },
    },
    { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: PROBE_VA }, spec: { attacher: PROBE_ATTACHER, nodeName: PROBE_NODE, source: { persistentVolumeName: PROBE_PV } } },
  ];
  kubectl(admin, ['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  return kubectl(admin, ['get', 'volumeattachment', PROBE_VA, '-o', 'jsonpath={.metadata.uid}']).trim();
}

export function deleteProbeObjects(admin: string, leaseNamespace: string, leaseName: string): void {
  kubectl(admin, ['delete', '--ignore-not-found', '--timeout=60s', `node/${PROBE_NODE}`, `persistentvolume/${PROBE_PV}`, `volumeattachment/${PROBE_VA}`]);
  kubectl(admin, ['-n', leaseNamespace, 'delete', '--ignore-not-found', `lease/${leaseName}`]);
}

export async function probeNodeStatus(api: KubeApiClient): Promise<{ first: string; stale: string; after: string[] }> {
  const a = [{ name: 'kubernetes.io/csi/probe^a', devicePath: '' }];
  const b = [{ name: 'kubernetes.io/csi/probe^b', devicePath: '' }];
  const c = [{ name: 'kubernetes.io/csi/probe^c', devicePath: '' }];
  // Two writers read the node with no list; the first writes [a], the second still expects none.
  const first = await api.patchNodeStatus(PROBE_NODE, a, { expected: null });
  const again = await api.patchNodeStatus(PROBE_NODE, b, { expected: a });
  const stale = await api.patchNodeStatus(PROBE_NODE, c, { expected: a });
  return { first: `${first},${again}`, stale, after: (await api.getNode(PROBE_NODE))?.volumesAttached ?? [] };
}

export async function probeVolumeAttachmentDelete(api: KubeApiClient, uid: string): Promise<{ wrongUid: string; stillThere: boolean; rightUid: string }> {
  const wrongUid = await api.deleteVolumeAttachment(PROBE_VA, { uid: '00000000-0000-0000-0000-000000000000' });
  const stillThere = (await api.getVolumeAttachment(PROBE_VA))?.uid === uid;
  const rightUid = await api.deleteVolumeAttachment(PROBE_VA, { uid });
  return { wrongUid, stillThere, rightUid };
}

/**
 * Two replicas race for the lock from the same read of the PV: node-a takes it; node-b's take
 * then goes out with the read made before node-a's write (its first read is answered with the
 * stale copy) and one attempt only, so its resourceVersion `test` is what decides.
 */
export async function probeVolumeLock(api: KubeApiClient): Promise<{ a: string; b: string; bPatch: string; holder: string | undefined }> {
  const staleRead = await api.getPersistentVolume(PROBE_PV);
  const a = await createVolumeLock({ api }).take(PROBE_PV, 'node-a', { bucket: 1, epoch: 1 });
  let bPatch = '';
  let served = false;
  const staleApi = {
    getPersistentVolume: async (name: string): Promise<PersistentVolumeMeta | undefined> => {
      if (served) return api.getPersistentVolume(name);
      served = true;
      return staleRead;
    },
    patchPersistentVolume: async (name: string, ops: Parameters<KubeApiClient['patchPersistentVolume']>[1]) => (bPatch = await api.patchPersistentVolume(name, ops)),
  };
  const b = await createVolumeLock({ api: staleApi, maxAttempts: 1 }).take(PROBE_PV, 'node-b', { bucket: 2, epoch: 1 });
  const holder = parseLockValue((await api.getPersistentVolume(PROBE_PV))?.annotations?.[ATTACH_LOCK_ANNOTATION])?.node;
  return { a: a.outcome, b: b.outcome, bPatch, holder };
}

/** The Lease name the probe claims: bucket 0 of a ring of `buckets`. */
export const probeLeaseName = (namespace: string, buckets: number, api: KubeApiClient) => createBucketLeases({ api, namespace, buckets }).name(0);

export async function probeBucketLease(api: KubeApiClient, namespace: string, buckets: number): Promise<{ staleUpdate: number | undefined; doubleCreate: number | undefined; holder: string; epoch: number }> {
  const leases = createBucketLeases({ api, namespace, buckets });
  const first = await leases.claim(0, undefined, 'probe-a');
  await leases.claim(0, first, 'probe-b');
  const code = async (p: Promise<unknown>) => {
    try {
      await p;
      return 200;
    } catch (err) {
      if (statusCodeOf(err) === 0) throw err;
      return statusCodeOf(err);
    }
  };
  const staleUpdate = await code(leases.claim(0, first, 'probe-c'));
  const doubleCreate = await code(leases.claim(0, undefined, 'probe-d'));
  const now = await leases.get(0);
  return { staleUpdate, doubleCreate, holder: now?.holderIdentity ?? '', epoch: now?.leaseTransitions ?? 0 };
}
