/**
 * The populator against the simulator: the PVC worker (C8), PV events re-processing the pods of
 * the claims bound to the PV (our addition), and `fleet_attach_desired_volumes_skipped` as the
 * registry exposes it. Periodic passes are far away in every test, so only events can act.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { node, pod, reflectorOf, startHarness, vaExists, vaName, volumeObjects, waitFor, type Harness } from './harness.js';

const FAR = { dswPopulatorPeriodMs: 600_000, dswListPodsPeriodMs: 600_000 };

/** The gauge's value per reason label, read from the controller's registry (collect runs). */
async function skipped(h: Harness): Promise<Record<string, number>> {
  const text = await h.ctl.metrics.registry.metrics();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^fleet_attach_desired_volumes_skipped\{reason="([a-z_]+)"\} (\d+)$/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

test('the PVC worker alone: a claim binding to a PV that already claims it attaches its pod (C8)', async () => {
  const h = await startHarness(FAR);
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    await h.ctl.acting();
    const v = volumeObjects('default', 'c8', { bound: false });
    const pvc = store.create('persistentvolumeclaims', v.pvc);
    ((v.pv.spec as { claimRef: { uid?: string } }).claimRef).uid = pvc.metadata.uid;
    store.create('persistentvolumes', v.pv);
    store.create('pods', v.pod);
    await waitFor('pod and PV seen', () => reflectorOf(h.ctl, 'pods').get('default/pod-c8') && reflectorOf(h.ctl, 'persistentvolumes').get('pv-c8'));
    assert.equal(h.ctl.state.counts().desiredPairs, 0, 'unbound claim (C4)');
    store.mutate('persistentvolumeclaims', 'default', 'pvc-c8', (c) => {
      (c.spec as Record<string, unknown>).volumeName = 'pv-c8';
      c.status = { phase: 'Bound' };
    });
    await waitFor('VA after the PVC event', () => vaExists(h.sim, vaName('c8', 'node-a')));
  } finally {
    await h.stop();
  }
});

test('a pod whose PV is missing counts as skipped (pv_not_found) until the PV arrives and attaches it', async () => {
  const h = await startHarness(FAR);
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    await h.ctl.acting();
    const v = volumeObjects('default', 'late');
    const pvc = store.create('persistentvolumeclaims', v.pvc);
    ((v.pv.spec as { claimRef: { uid?: string } }).claimRef).uid = pvc.metadata.uid;
    store.create('pods', v.pod);
    await waitFor('skipped for the missing PV', async () => (await skipped(h)).pv_not_found === 1);
    const before = await skipped(h);
    assert.equal(Object.values(before).reduce((a, b) => a + b, 0), 1, `only that volume: ${JSON.stringify(before)}`);
    store.create('persistentvolumes', v.pv);
    await waitFor('VA after the PV event', () => vaExists(h.sim, vaName('late', 'node-a')));
    assert.equal((await skipped(h)).pv_not_found, 0);
  } finally {
    await h.stop();
  }
});

test('a PV claiming another PVC is skipped (pv_claim_mismatch) until an update binds it to the claim', async () => {
  const h = await startHarness(FAR);
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    await h.ctl.acting();
    const v = volumeObjects('default', 'rebind');
    const pvc = store.create('persistentvolumeclaims', v.pvc);
    ((v.pv.spec as { claimRef: { uid?: string } }).claimRef).uid = 'another-claim';
    store.create('persistentvolumes', v.pv);
    store.create('pods', v.pod);
    await waitFor('skipped for the mismatched claimRef', async () => (await skipped(h)).pv_claim_mismatch === 1);
    // A status-only update (filtered by the populator, see test/populator) changes nothing.
    store.mutate('persistentvolumes', undefined, 'pv-rebind', (p) => {
      p.status = { phase: 'Released' };
    });
    await waitFor('status update seen', () => (reflectorOf(h.ctl, 'persistentvolumes').get('pv-rebind') as { phase?: string } | undefined)?.phase === 'Released');
    assert.equal(h.ctl.state.counts().desiredPairs, 0);
    store.mutate('persistentvolumes', undefined, 'pv-rebind', (p) => {
      ((p.spec as Record<string, unknown>).claimRef as Record<string, unknown>).uid = pvc.metadata.uid;
    });
    await waitFor('VA after the PV binding', () => vaExists(h.sim, vaName('rebind', 'node-a')));
    assert.equal((await skipped(h)).pv_claim_mismatch, 0);
  } finally {
    await h.stop();
  }
});

test('skipped volumes by reason: missing claim, unbound claim, CSI inline; configMap volumes are not counted; gone with their pod', async () => {
  const h = await startHarness(FAR);
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    await h.ctl.acting();
    const p = pod('default', 'pod-mixed', 'node-a', ['no-such-claim', 'pvc-unbound']);
    const spec = p.spec as { volumes: unknown[] };
    spec.volumes.push({ name: 'inline', csi: { driver: 'inline.csi.example.com' } }, { name: 'cfg', configMap: { name: 'x' } });
    store.create('persistentvolumeclaims', volumeObjects('default', 'unbound', { bound: false }).pvc);
    await waitFor('claim seen', () => reflectorOf(h.ctl, 'persistentvolumeclaims').get('default/pvc-unbound'));
    store.create('pods', p);
    await waitFor('skipped counted', async () => (await skipped(h)).not_attachable === 1);
    const s = await skipped(h);
    assert.deepEqual(
      { pvc_not_found: s.pvc_not_found, pvc_not_bound: s.pvc_not_bound, not_attachable: s.not_attachable, total: Object.values(s).reduce((a, b) => a + b, 0) },
      { pvc_not_found: 1, pvc_not_bound: 1, not_attachable: 1, total: 3 },
    );
    store.delete('pods', 'default', 'pod-mixed', { gracePeriodSeconds: 0 });
    await waitFor('pod removal seen', async () => Object.values(await skipped(h)).every((n) => n === 0));
  } finally {
    await h.stop();
  }
});
