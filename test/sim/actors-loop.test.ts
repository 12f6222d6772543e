/**
 * The fleet actors together: 200 nodes × 5 pods with the attacher and kubelets
 * on, served over HTTPS. A hand-written loop (not the controller) talks to the simulator only
 * through @kubernetes/client-node: it creates one VolumeAttachment per pod, waits for
 * `status.attached`, then reports the volume in `node.status.volumesAttached`. Every
 * attachment must become attached, and every volume must appear in its node's
 * `volumesInUse`, never before the node's status lists it as attached.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api, KubeConfig, PatchStrategy, StorageV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { FLEET_NAMESPACE, uniqueVolumeName, volumeAttachmentName } from '../../src/sim/actors/index.js';
import { startSimulator } from '../../src/sim/server/index.js';

const NODES = 200;
const PODS_PER_NODE = 5;
const driver = 'loop.csi.fleet-attach.io';

/** Runs `fn` over `items` with at most `limit` in flight. */
async function mapLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

interface Wanted {
  node: string;
  pv: string;
  handle: string;
  unique: string;
  va: string;
}

test('actors loop: every VolumeAttachment is attached and every volume goes in use after its node lists it', { timeout: 120_000 }, async () => {
  // Arrange
  const sim = await startSimulator({
    fleet: { seed: 2, nodes: NODES, podsPerNode: PODS_PER_NODE, rwxFraction: 0.2, driver, attacher: true, kubelet: true, attachLatencyMs: 20, detachLatencyMs: 20, mountLatencyMs: 20, unmountLatencyMs: 20 },
  });
  // Invariant checked on every committed node change: in use ⊆ attached, and when each volume was first listed.
  const violations: string[] = [];
  const attachedAt = new Map<string, number>();
  const inUseAt = new Map<string, number>();
  const unsubscribe = sim.store.subscribe((ev) => {
    if (ev.resource !== 'nodes') return;
    const status = (ev.object().status ?? {}) as { volumesAttached?: Array<{ name: string }>; volumesInUse?: string[] };
    const attached = new Set((status.volumesAttached ?? []).map((v) => v.name));
    for (const u of attached) if (!attachedAt.has(u)) attachedAt.set(u, ev.rv);
    for (const u of status.volumesInUse ?? []) {
      if (!attached.has(u)) violations.push(`${u} in use on ${ev.name} but not attached`);
      if (!inUseAt.has(u)) inUseAt.set(u, ev.rv);
    }
  });
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const storage = kc.makeApiClient(StorageV1Api);
  try {
    const [pods, pvcs, pvs] = await Promise.all([
      core.listNamespacedPod({ namespace: FLEET_NAMESPACE }),
      core.listNamespacedPersistentVolumeClaim({ namespace: FLEET_NAMESPACE }),
      core.listPersistentVolume(),
    ]);
    const pvOfClaim = new Map(pvcs.items.map((c) => [c.metadata?.name ?? '', c.spec?.volumeName ?? '']));
    const handleOfPv = new Map(pvs.items.map((v) => [v.metadata?.name ?? '', v.spec?.csi?.volumeHandle ?? '']));
    const wanted: Wanted[] = pods.items.map((p) => {
      const node = p.spec?.nodeName ?? '';
      const pv = pvOfClaim.get(p.spec?.volumes?.[0]?.persistentVolumeClaim?.claimName ?? '') ?? '';
      const handle = handleOfPv.get(pv) ?? '';
      return { node, pv, handle, unique: uniqueVolumeName(driver, handle), va: volumeAttachmentName(handle, driver, node) };
    });
    assert.equal(wanted.length, NODES * PODS_PER_NODE);
    assert.ok(wanted.every((w) => w.node && w.pv && w.handle), 'every pod resolves to a CSI volume');

    // Act: the hand-written loop.
    await mapLimit(wanted, 16, (w) =>
      storage.createVolumeAttachment({
        body: { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: w.va }, spec: { attacher: driver, nodeName: w.node, source: { persistentVolumeName: w.pv } } },
      }),
    );
    const byVa = new Map(wanted.map((w) => [w.va, w]));
    const reported = new Map<string, string[]>();
    let reportedCount = 0;
    const deadline = Date.now() + 60_000;
    while (reportedCount < wanted.length) {
      assert.ok(Date.now() < deadline, `only ${reportedCount} of ${wanted.length} attachments reported in time`);
      const vas = await storage.listVolumeAttachment();
      const changed = new Set<string>();
      for (const va of vas.items) {
        const w = byVa.get(va.metadata?.name ?? '');
        if (!w || va.status?.attached !== true) continue;
        const list = reported.get(w.node) ?? [];
        if (list.includes(w.unique)) continue;
        reported.set(w.node, [...list, w.unique]);
        reportedCount++;
        changed.add(w.node);
      }
      await mapLimit([...changed], 16, (node) =>
        core.patchNodeStatus(
          { name: node, body: { status: { volumesAttached: (reported.get(node) ?? []).map((name) => ({ name, devicePath: '' })) } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      );
      if (changed.size === 0) await new Promise((r) => setTimeout(r, 50));
    }

    // Assert
    const allInUse = async () => {
      const nodes = await core.listNode();
      const inUse = new Set(nodes.items.flatMap((n) => n.status?.volumesInUse ?? []));
      return wanted.every((w) => inUse.has(w.unique));
    };
    const until = Date.now() + 30_000;
    while (!(await allInUse())) {
      assert.ok(Date.now() < until, 'every volume in use in time');
      await new Promise((r) => setTimeout(r, 100));
    }
    const vas = await storage.listVolumeAttachment();
    assert.equal(vas.items.length, wanted.length);
    assert.ok(vas.items.every((va) => va.status?.attached === true && va.metadata?.finalizers?.length === 1), 'every VA attached and held by the attacher');
    assert.deepEqual(violations, []);
    for (const w of wanted) {
      assert.ok((inUseAt.get(w.unique) ?? 0) > (attachedAt.get(w.unique) ?? Infinity), `${w.unique} in use after it was listed attached`);
    }
    const stats = sim.actors?.stats();
    assert.equal(stats?.attacher.attached, wanted.length);
    assert.equal(stats?.kubelet.mounted, wanted.length);
    assert.ok((stats?.kubelet.nodeStatusWrites ?? 0) < wanted.length, 'node status writes are coalesced');
  } finally {
    unsubscribe();
    await sim.stop();
  }
});
