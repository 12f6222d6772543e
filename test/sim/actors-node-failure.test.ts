import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OUT_OF_SERVICE_TAINT, populateFleet, startFleetActors } from '../../src/sim/actors/index.js';
import type { KubeObject, SimStore } from '../../src/sim/store/sim-store.js';
import { specOf, statusOf, testStore, waitFor } from './actors-helpers.js';

const ready = (o: KubeObject) => (statusOf(o).conditions as Array<{ type: string; status: string }>).find((c) => c.type === 'Ready')?.status;
const tainted = (o: KubeObject) => ((specOf(o).taints as Array<{ key: string; effect: string }> | undefined) ?? []).some((t) => t.key === OUT_OF_SERVICE_TAINT && t.effect === 'NoExecute');

/** Records each node's (Ready, tainted) transitions. */
function recordNodes(store: SimStore): { states: Map<string, string[]>; stop: () => void } {
  const states = new Map<string, string[]>();
  const stop = store.subscribe((ev) => {
    if (ev.resource !== 'nodes') return;
    const o = ev.object();
    const s = `${ready(o)}${tainted(o) ? '+oos' : ''}`;
    const list = states.get(ev.name) ?? [];
    if (list.at(-1) !== s) list.push(s);
    states.set(ev.name, list);
  });
  return { states, stop };
}

test('node failures: nodes go NotReady with the out-of-service taint, pods are evicted, and nodes recover untainted', async () => {
  // Arrange
  const store = testStore();
  await populateFleet(store, { nodes: 20, podsPerNode: 2 });
  const rec = recordNodes(store);
  const actors = startFleetActors(store, { attacher: false, kubelet: false, nodeFailureRate: 20, nodeRecoveryMs: 200, outOfServiceFraction: 1 });
  try {
    // Act
    await waitFor('three recoveries', () => actors.stats()['node-failure'].nodesRecovered >= 3);
    // Assert
    const podsOnTainted = store.list('nodes').filter(tainted).map((n) => store.list('pods').filter((p) => specOf(p).nodeName === n.metadata.name).length);
    assert.ok(podsOnTainted.every((n) => n === 0), 'out-of-service nodes have no pods left');
    assert.equal(store.count('pods'), 40, 'evicted pods were recreated elsewhere');
    assert.ok(actors.stats()['node-failure'].podsEvicted > 0);
    let recovered = 0;
    for (const seq of rec.states.values()) {
      for (let i = 1; i < seq.length; i++) {
        if (seq[i] === 'Unknown+oos') assert.equal(seq[i - 1], 'True', 'fails from Ready');
        if (seq[i] === 'True') {
          assert.equal(seq[i - 1], 'Unknown+oos');
          recovered++;
        }
        assert.ok(seq[i] === 'True' || seq[i] === 'Unknown+oos', `unexpected node state ${seq[i]}`);
      }
    }
    assert.ok(recovered >= 3);
  } finally {
    rec.stop();
    await actors.stop();
  }
});

test('node failures: with outOfServiceFraction 0 no node is tainted and pods stay put', async () => {
  const store = testStore();
  await populateFleet(store, { nodes: 10, podsPerNode: 2 });
  const rec = recordNodes(store);
  const before = new Map(store.list('pods').map((p) => [p.metadata.name, p.metadata.uid]));
  const actors = startFleetActors(store, { attacher: false, kubelet: false, nodeFailureRate: 20, nodeRecoveryMs: 100, outOfServiceFraction: 0 });
  try {
    await waitFor('two recoveries', () => actors.stats()['node-failure'].nodesRecovered >= 2);
    const seen = new Set([...rec.states.values()].flat());
    assert.ok(seen.has('Unknown'));
    assert.ok(![...seen].some((s) => s.includes('oos')));
    assert.deepEqual(new Map(store.list('pods').map((p) => [p.metadata.name, p.metadata.uid])), before);
  } finally {
    rec.stop();
    await actors.stop();
  }
});
