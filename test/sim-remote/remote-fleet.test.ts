/**
 * The fleet actors over the API: an empty simulator plays the
 * cluster (as a real kube-apiserver with no kubelets and no CSI attacher would), the remote
 * fleet (`sim --actors-only`) populates it and plays kubelets and attacher through its API, and
 * the controller runs against the same kubeconfig. The cluster converges; pods deleted through
 * the API get their volumes unmounted (volumesInUse) and then detached.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startController, type Controller } from '../../src/manager/controller.js';
import { startRemoteFleet, type RemoteFleet } from '../../src/sim/remote/index.js';
import { startSimulator, type Simulator } from '../../src/sim/server/index.js';
import type { KubeObject } from '../../src/sim/store/sim-store.js';

const NODES = 20;
const PODS_PER_NODE = 3;
const DRIVER = 'sim.csi.fleet-attach.io';

type Rec = Record<string, unknown>;
const spec = (o: KubeObject) => (o.spec ?? {}) as Rec;
const status = (o: KubeObject) => (o.status ?? {}) as Rec;
const names = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String((x as Rec).name))) : []);

/** The unique volume name of each claim (`ns/claim`), from the PVs' claimRefs. */
function volumeOfClaim(sim: Simulator): Map<string, string> {
  const out = new Map<string, string>();
  for (const pv of sim.store.list('persistentvolumes')) {
    const ref = spec(pv).claimRef as Rec | undefined;
    const csi = spec(pv).csi as Rec | undefined;
    if (ref && csi) out.set(`${String(ref.namespace)}/${String(ref.name)}`, `kubernetes.io/csi/${String(csi.driver)}^${String(csi.volumeHandle)}`);
  }
  return out;
}

/** Per pod: its node and unique volume name. */
function podVolumes(sim: Simulator): Array<{ pod: string; node: string; volume: string }> {
  const vol = volumeOfClaim(sim);
  const out: Array<{ pod: string; node: string; volume: string }> = [];
  for (const pod of sim.store.list('pods', 'fleet')) {
    for (const v of (spec(pod).volumes ?? []) as Rec[]) {
      const claim = (v.persistentVolumeClaim as Rec | undefined)?.claimName;
      const volume = vol.get(`fleet/${String(claim)}`);
      if (volume) out.push({ pod: pod.metadata.name, node: String(spec(pod).nodeName), volume });
    }
  }
  return out;
}

/** VolumeAttachments by node and volume. */
function attachments(sim: Simulator): Map<string, KubeObject> {
  const pvs = new Map(sim.store.list('persistentvolumes').map((pv) => [pv.metadata.name, pv]));
  const out = new Map<string, KubeObject>();
  for (const va of sim.store.list('volumeattachments')) {
    const pv = pvs.get(String((spec(va).source as Rec).persistentVolumeName));
    const csi = pv && (spec(pv).csi as Rec);
    if (csi) out.set(`${String(spec(va).nodeName)}|kubernetes.io/csi/${String(csi.driver)}^${String(csi.volumeHandle)}`, va);
  }
  return out;
}

async function waitFor(what: string, fn: () => string | true, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const r = fn();
    if (r === true) return;
    last = r;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}: ${last}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

test('remote actors drive an empty API server; the controller attaches, and detaches after pods are deleted', { timeout: 120_000 }, async () => {
  let sim: Simulator | undefined;
  let fleet: RemoteFleet | undefined;
  let ctl: Controller | undefined;
  try {
    sim = await startSimulator({ host: '127.0.0.1', port: 0, bookmarkIntervalMs: 1000 });
    const s = sim;
    // A node of the cluster's own (not labelled as the fleet's): the actors leave it alone.
    s.store.create('nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'own-node' }, spec: {}, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    // Watched along the way, on the cluster's own store: the kubelets list in volumesInUse only
    // attached volumes, and no VolumeAttachment is deleted while its volume is in use.
    const inUse = new Map<string, Set<string>>();
    const violations: string[] = [];
    const pvHandle = new Map<string, string>();
    let inUseAdds = 0;
    let inUseRemovals = 0;
    s.store.subscribe((ev) => {
      const o = ev.view();
      if (ev.resource === 'persistentvolumes' && ev.type !== 'DELETED') {
        const csi = spec(o).csi as Rec | undefined;
        if (csi) pvHandle.set(o.metadata.name, `kubernetes.io/csi/${String(csi.driver)}^${String(csi.volumeHandle)}`);
      } else if (ev.resource === 'nodes' && ev.type !== 'DELETED') {
        const used = new Set(names(status(o).volumesInUse));
        const attached = new Set(names(status(o).volumesAttached));
        const before = inUse.get(o.metadata.name) ?? new Set<string>();
        for (const v of used) if (!before.has(v)) inUseAdds++;
        for (const v of before) if (!used.has(v)) inUseRemovals++;
        for (const v of used) if (!attached.has(v) && !before.has(v)) violations.push(`${o.metadata.name}: ${v} in use before it was attached`);
        inUse.set(o.metadata.name, used);
      } else if (ev.resource === 'volumeattachments' && o.metadata.deletionTimestamp !== undefined) {
        const node = String(spec(o).nodeName);
        const volume = pvHandle.get(String((spec(o).source as Rec).persistentVolumeName));
        if (volume && inUse.get(node)?.has(volume)) violations.push(`VolumeAttachment ${o.metadata.name} deleted while ${volume} is in use on ${node}`);
      }
    });

    fleet = await startRemoteFleet({
      kubeconfig: { yaml: s.kubeconfig },
      fleet: { nodes: NODES, podsPerNode: PODS_PER_NODE, churn: 0, nodeFailureRate: 0, seed: 7, attachLatencyMs: 30, detachLatencyMs: 30, mountLatencyMs: 30, unmountLatencyMs: 30 },
      bookmarkIntervalMs: 1000,
      qps: 500,
      maxInFlight: 16,
    });
    const pop = fleet.population;
    assert.equal(pop.nodes, NODES);
    assert.equal(pop.pods, NODES * PODS_PER_NODE);
    assert.equal(pop.persistentVolumes, NODES * PODS_PER_NODE);
    assert.equal(pop.errors, 0);
    // Created through the API: bound, scheduled, running, with the claims' real uids.
    assert.equal(s.store.count('pods'), NODES * PODS_PER_NODE);
    for (const pod of s.store.list('pods', 'fleet')) {
      assert.ok(spec(pod).nodeName, `${pod.metadata.name} has spec.nodeName`);
      assert.equal(status(pod).phase, 'Running');
    }
    for (const pv of s.store.list('persistentvolumes')) {
      const ref = spec(pv).claimRef as Rec;
      assert.equal(ref.uid, s.store.get('persistentvolumeclaims', String(ref.namespace), String(ref.name))?.metadata.uid, `${pv.metadata.name} claimRef uid`);
    }

    ctl = await startController({
      kubeconfig: { yaml: s.kubeconfig },
      leaderElect: false,
      workers: 0,
      kernelBuild: 'debug',
      loopPeriodMs: 50,
      dswPopulatorPeriodMs: 1_000,
      dswListPodsPeriodMs: 3_000,
      kubeApiQps: 1000,
      kubeApiBurst: 1000,
      bookmarkIntervalMs: 1000,
    });

    const converged = (): string | true => {
      const vas = attachments(s);
      const nodes = new Map(s.store.list('nodes').map((n) => [n.metadata.name, n]));
      let ok = 0;
      const pairs = podVolumes(s);
      for (const { node, volume } of pairs) {
        const st = status(nodes.get(node) as KubeObject);
        if ((status(vas.get(`${node}|${volume}`) ?? { metadata: { name: '' } }).attached === true) && names(st.volumesAttached).includes(volume) && names(st.volumesInUse).includes(volume)) ok++;
      }
      return ok === NODES * PODS_PER_NODE && pairs.length === ok ? true : `${ok}/${pairs.length} attached, listed and in use`;
    };
    await waitFor('every volume attached, in volumesAttached and in volumesInUse', converged, 60_000);
    assert.equal(s.store.count('volumeattachments'), NODES * PODS_PER_NODE);
    // The attacher's finalizers, on VolumeAttachments and PVs, went through the API too.
    for (const va of s.store.list('volumeattachments')) assert.deepEqual(va.metadata.finalizers, [`external-attacher/${DRIVER}`]);
    const leases = s.store.list('leases', 'kube-node-lease').map((l) => l.metadata.name);
    assert.ok(leases.length > 0, 'node Leases renewed through the API');
    assert.ok(!leases.includes('own-node'), 'no Lease for a node outside the fleet');

    // Pods deleted through the API, gracefully: the kubelets stop them, unmount, and finish the deletion.
    const kc = new KubeConfig();
    kc.loadFromString(s.kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    const before = podVolumes(s);
    const doomed = before.filter((_, i) => i % 6 === 0);
    const kept = before.filter((_, i) => i % 6 !== 0);
    const removalsBefore = inUseRemovals;
    for (const { pod } of doomed) await core.deleteNamespacedPod({ name: pod, namespace: 'fleet' });
    await waitFor('deleted pods gone and their volumes detached', () => {
      const vas = attachments(s);
      const nodes = new Map(s.store.list('nodes').map((n) => [n.metadata.name, n]));
      for (const { pod, node, volume } of doomed) {
        if (s.store.get('pods', 'fleet', pod)) return `pod ${pod} still there`;
        if (vas.has(`${node}|${volume}`)) return `${volume} still has a VolumeAttachment on ${node}`;
        const st = status(nodes.get(node) as KubeObject);
        if (names(st.volumesInUse).includes(volume) || names(st.volumesAttached).includes(volume)) return `${volume} still listed on ${node}`;
      }
      return true;
    }, 60_000);
    assert.ok(inUseRemovals - removalsBefore >= doomed.length, `the kubelets took ${doomed.length} volumes out of volumesInUse (saw ${inUseRemovals - removalsBefore})`);
    // The others are untouched.
    const vas = attachments(s);
    for (const { node, volume } of kept) assert.equal(status(vas.get(`${node}|${volume}`) as KubeObject).attached, true, `${volume} stays attached`);
    assert.ok(inUseAdds >= NODES * PODS_PER_NODE, `volumes mounted: ${inUseAdds}`);
    assert.deepEqual(violations, []);

    const stats = fleet.stats();
    assert.equal(stats.kubelet.podsFinished, doomed.length);
    assert.equal(stats.attacher.detached, doomed.length);
    for (const a of ['attacher', 'kubelet', 'node-lease']) assert.equal(stats[a].writeErrors, 0, `${a} write errors`);
    assert.equal(stats.remote.errors, 0, 'remote store errors');
    assert.ok(stats.remote.statusUpdates > 0, 'status writes went to the status subresource');
  } finally {
    await ctl?.stop();
    await fleet?.stop();
    await sim?.stop();
  }
});
