/**
 * The Node status compare-and-swap against the simulator's store: a test of the list alone
 * passes again once the list has gone away and come back (A→B→A), so a write delayed past other
 * writers' changes would land; with the Node's resourceVersion as read, it is refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createKubeApiClient, type KubeApiClient } from '../../src/kube/api-client.js';
import { loadKubeConfig } from '../../src/kube/kube-config.js';
import { startSimulator, type Simulator } from '../../src/sim/server/index.js';

const V = { name: 'kubernetes.io/csi/d^h1', devicePath: '' };

describe('node status compare-and-swap with the resourceVersion', () => {
  let sim: Simulator;
  let api: KubeApiClient;
  let node: string;
  const versionOf = () => String(sim.store.get('nodes', undefined, node)!.metadata.resourceVersion);
  const listOf = () => (sim.store.get('nodes', undefined, node)!.status as { volumesAttached?: unknown[] }).volumesAttached ?? [];

  before(async () => {
    sim = await startSimulator({ fleet: { nodes: 1, podsPerNode: 0, attacher: false, kubelet: false, seed: 5 } });
    api = createKubeApiClient({ kc: loadKubeConfig({ yaml: sim.kubeconfig, env: {} }) });
    node = sim.store.list('nodes')[0]!.metadata.name;
  });
  after(async () => {
    await sim.stop();
  });

  it('refuses a write read before an A→B→A change of the list, which the list test alone lets through', async () => {
    assert.equal(await api.patchNodeStatus(node, [V], { expected: [], resourceVersion: versionOf() }), 'patched');
    // What a delayed writer read: the list [V] at this version.
    const staleVersion = versionOf();
    assert.equal(await api.patchNodeStatus(node, null, { expected: [V], resourceVersion: staleVersion }), 'patched');
    assert.equal(await api.patchNodeStatus(node, [V], { expected: [], resourceVersion: versionOf() }), 'patched');
    assert.deepEqual(listOf(), [V]);
    const before = versionOf();

    assert.equal(await api.patchNodeStatus(node, null, { expected: [V], resourceVersion: staleVersion }), 'conflict');
    assert.equal(versionOf(), before, 'the refused write changed nothing');
    assert.deepEqual(listOf(), [V]);

    assert.equal(await api.patchNodeStatus(node, null, { expected: [V] }), 'patched', 'the list test alone passes on the list that came back');
    assert.deepEqual(listOf(), []);
  });
});
