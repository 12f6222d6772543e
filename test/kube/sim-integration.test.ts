/**
 * The kube layer against the in-process simulator over HTTPS (its CA, its token): every
 * reflector syncs to the store's contents, bookmarks arrive, writes round-trip through the
 * watches, and two electors share one Lease.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createKubeApiClient, type KubeApiClient } from '../../src/kube/api-client.js';
import { loadKubeConfig, type FleetKubeConfig } from '../../src/kube/kube-config.js';
import {
  CSI_DRIVER_KIND,
  CSI_NODE_KIND,
  NODE_KIND,
  POD_KIND,
  PV_KIND,
  PVC_KIND,
  VOLUME_ATTACHMENT_KIND,
  type ResourceKind,
} from '../../src/kube/projections/index.js';
import { createReflector, type Reflector } from '../../src/kube/reflector.js';
import { createLeaderElector } from '../../src/leaderelection/index.js';
import { startSimulator, type Simulator } from '../../src/sim/server/index.js';
import type { ResourceName } from '../../src/sim/store/sim-store.js';
import { waitFor } from './fake-kube-server.js';

describe('kube layer against the simulator', () => {
  let sim: Simulator;
  let kc: FleetKubeConfig;
  let api: KubeApiClient;
  const reflectors: Array<Reflector<unknown>> = [];
  const start = <T>(kind: ResourceKind<T>): Reflector<T> => {
    const r = createReflector<T>({ kc, kind, pageSize: 37, bookmarkIntervalMs: 200 });
    reflectors.push(r as Reflector<unknown>);
    void r.start();
    return r;
  };

  before(async () => {
    sim = await startSimulator({ fleet: { nodes: 40, podsPerNode: 3, attacher: false, kubelet: false, seed: 3 }, bookmarkIntervalMs: 200 });
    kc = loadKubeConfig({ yaml: sim.kubeconfig, env: {} });
    api = createKubeApiClient({ kc });
  });
  after(async () => {
    await Promise.all(reflectors.map((r) => r.stop()));
    kc.close();
    await sim.stop();
  });

  it('syncs every resource through paged lists to exactly the store contents', async () => {
    const kinds: Array<[ResourceKind<unknown>, ResourceName]> = [
      [POD_KIND, 'pods'],
      [PVC_KIND, 'persistentvolumeclaims'],
      [PV_KIND, 'persistentvolumes'],
      [NODE_KIND, 'nodes'],
      [VOLUME_ATTACHMENT_KIND, 'volumeattachments'],
      [CSI_DRIVER_KIND, 'csidrivers'],
      [CSI_NODE_KIND, 'csinodes'],
    ];
    const rs = kinds.map(([k]) => start(k));
    await waitFor(() => rs.every((r) => r.synced()), 'all synced', 20_000);
    for (const [i, [, res]] of kinds.entries()) {
      const r = rs[i] as Reflector<unknown>;
      assert.equal(r.size(), sim.store.count(res), `${res} count`);
      assert.equal(r.stats().malformed, 0, `${res} malformed`);
    }
    assert.equal(sim.store.count('pods'), 120);
    const pods = rs[0] as Reflector<{ nodeName: string; volumes: Array<{ kind: string }> }>;
    assert.ok([...pods.values()].every((p) => p.nodeName !== '' && p.volumes.some((v) => v.kind === 'pvc')));
    const nodes = rs[3] as unknown as Reflector<{ managed: boolean; ready: boolean }>;
    assert.ok([...nodes.values()].every((n) => n.managed && n.ready));
    assert.ok((pods.stats().lastList?.pages ?? 0) >= 4, 'the pod list took several pages');
    await waitFor(() => nodes.stats().bookmarks > 0, 'a bookmark on the node watch', 10_000);
  });

  it('round-trips writes through the watches', async () => {
    const vas = start(VOLUME_ATTACHMENT_KIND);
    const nodes = start(NODE_KIND);
    await waitFor(() => vas.synced() && nodes.synced(), 'synced');
    const nodeName = [...nodes.keys()][0] as string;
    const body = { metadata: { name: 'csi-test-1' }, spec: { attacher: 'sim.csi.fleet-attach.io', nodeName, source: { persistentVolumeName: 'pv-x' } } };
    assert.equal(await api.createVolumeAttachment(body), 'created');
    assert.equal(await api.createVolumeAttachment(body), 'already-exists');
    await waitFor(() => vas.get('csi-test-1')?.nodeName === nodeName, 'VA seen by the watch');
    assert.equal(await api.patchNodeStatus(nodeName, [{ name: 'kubernetes.io/csi/sim^h', devicePath: '' }]), 'patched');
    await waitFor(() => nodes.get(nodeName)?.volumesAttached.includes('kubernetes.io/csi/sim^h') === true, 'status seen by the watch');
    assert.equal((await api.getNode(nodeName))?.volumesAttached.length, 1);
    assert.equal(await api.patchNodeStatus('no-such-node', []), 'not-found');
    assert.equal(await api.deleteVolumeAttachment('csi-test-1'), 'deleted');
    await waitFor(() => vas.get('csi-test-1') === undefined, 'delete seen by the watch');
    assert.equal(await api.deleteVolumeAttachment('csi-test-1'), 'not-found');
  });

  it('elects one of two replicas on a simulator Lease and hands over on stop', async () => {
    const started: string[] = [];
    const make = (id: string) =>
      createLeaderElector({
        api,
        namespace: 'default',
        name: 'fleet-attach-test',
        identity: id,
        leaseDurationMs: 1500,
        renewDeadlineMs: 1000,
        retryPeriodMs: 100,
        onStartedLeading: () => started.push(id),
        onStoppedLeading: () => {},
      });
    const a = make('a');
    const b = make('b');
    void a.start();
    await waitFor(() => a.isLeader(), 'a leads', 10_000);
    void b.start();
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(b.isLeader(), false);
    await a.stop();
    await waitFor(() => b.isLeader(), 'b takes over', 10_000);
    await b.stop();
    assert.deepEqual(started, ['a', 'b']);
    const lease = await api.getLease('default', 'fleet-attach-test');
    assert.equal(lease?.holderIdentity, '');
    assert.equal(lease?.leaseTransitions, 1);
  });
});
