// M1 in slices: the periodic verification walks every node a slice at a time, judging each node
// from the state at its turn, and lets other work run between slices.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createWorldState, type WorldState } from '../../src/cache/world-state.js';
import { createFakeAttachablePlugin } from '../../src/plugins/fake-attachable-plugin.js';
import type { VolumePluginManager, VolumeSpec } from '../../src/plugins/index.js';
import { volumeInfoFor } from '../../src/populator/volume-info.js';
import { verifyAttachedVolumes } from '../../src/reconciler/verify-attached.js';

const DRIVER = 'test.csi.k8s.io';

function attach(state: WorldState, node: string, handle: string): void {
  const n = state.findNode(node) ?? state.internNode(node);
  const name = `kubernetes.io/csi/${DRIVER}^${handle}`;
  const v = state.findVolume(name) ?? state.internVolume(name);
  const spec: VolumeSpec = { name: `pv-${handle}`, origin: 'pv', source: { type: 'csi', driver: DRIVER, volumeHandle: handle }, accessModes: ['ReadWriteOnce'], readOnly: false, migrated: false };
  state.setVolumeInfo(v, volumeInfoFor(name, spec, 'kubernetes.io/csi'));
  state.markAttached(v, n);
}

function fixture(nodes: number) {
  const state = createWorldState();
  for (let i = 0; i < nodes; i++) for (let k = 0; k < 4; k++) attach(state, `node-${i}`, `n${i}-v${k}`);
  const plugin = createFakeAttachablePlugin();
  // The volumes ending in -v0 are gone from the cluster; the others are still attached.
  plugin.stillAttached = (volumeName) => !volumeName.endsWith('-v0');
  const plugins = { findAttachablePluginBySpec: () => plugin } as unknown as VolumePluginManager;
  return { state, plugins };
}

const attachedCount = (state: WorldState) => state.counts().attached;

test('removes every entry the plugin no longer reports, in many slices with other work between them', async () => {
  const { state, plugins } = fixture(400);
  // An operation owns one of the gone pairs: its result decides, the walk leaves it alone.
  const owned = state.findVolume(`kubernetes.io/csi/${DRIVER}^n7-v0`)!;
  state.tryStartOperation(owned, state.findNode('node-7')!, 'detach', 0);
  let between = 0;
  let done = false;
  const ticker = (): void => {
    if (done) return;
    between++;
    // A node added while the walk runs, after its cursor, is verified too.
    if (between === 2) attach(state, 'node-late', 'late-v0');
    setImmediate(ticker);
  };
  setImmediate(ticker);
  const observed: number[] = [];
  state.internNode('node-empty'); // no attached entry: nothing to verify, nothing observed
  const { removed, stats } = await verifyAttachedVolumes({ state, plugins }, { budgetMs: 0, observeNode: (s) => observed.push(s) });
  done = true;
  assert.equal(observed.length, 401, 'one duration per node with attached entries (J4, per node)');
  assert.ok(observed.every((s) => Number.isFinite(s) && s >= 0), 'durations in seconds');
  assert.equal(removed, 400 - 1 + 1, 'one per node (the owned pair kept), plus the late node');
  // The cost it reports: every node once (the late and empty ones too), 63 per slice with a zero budget (the
  // clock is read before every 64th item).
  assert.deepEqual({ items: stats.items, slices: stats.slices, cancelled: stats.cancelled }, { items: 402, slices: Math.ceil(402 / 63), cancelled: false });
  assert.ok(stats.busyMs > 0);
  assert.equal(attachedCount(state), 400 * 3 + 1);
  assert.ok(between >= 400 / 64, `other work ran ${between} times between slices`);
});

test('stops between slices when cancelled', async () => {
  const { state, plugins } = fixture(400);
  let slices = 0;
  const { removed, stats } = await verifyAttachedVolumes({ state, plugins }, {
    budgetMs: 0,
    cancelled: () => ++slices > 2,
  });
  assert.ok(removed > 0 && removed < 400, `removed ${removed} before stopping`);
  assert.equal(stats.cancelled, true);
  assert.equal(stats.items, 2 * 63, 'two slices of 63 nodes, then cancelled');
  assert.equal(attachedCount(state), 400 * 4 - removed);
});

test('a second look (L6) keeps what it finds attached, and an entry that changed while it was out', async () => {
  const { state, plugins } = fixture(3);
  const plugin = plugins.findAttachablePluginBySpec({} as VolumeSpec) as ReturnType<typeof createFakeAttachablePlugin>;
  let release!: () => void;
  const out = new Promise<void>((r) => (release = r));
  const asked: string[] = [];
  // node-1's gone volume is found attached after all; the others are confirmed gone.
  Object.assign(plugin, {
    async recheckAttached(specs: readonly VolumeSpec[], nodeName: string) {
      asked.push(`${nodeName}:${specs.length}`);
      await out;
      return specs.map(() => nodeName === 'node-1');
    },
  });
  const done = verifyAttachedVolumes({ state, plugins }, { budgetMs: 0 });
  await new Promise((r) => setImmediate(r));
  // While the second look is out, an operation takes node-2's gone volume: its result decides.
  const v2 = state.findVolume(`kubernetes.io/csi/${DRIVER}^n2-v0`)!;
  assert.equal(state.tryStartOperation(v2, state.findNode('node-2')!, 'detach', 0), 'started');
  release();
  const { removed } = await done;
  assert.deepEqual(asked.sort(), ['node-0:1', 'node-1:1', 'node-2:1']);
  assert.equal(removed, 1, "only node-0's");
  assert.equal(state.attachState(state.findVolume(`kubernetes.io/csi/${DRIVER}^n0-v0`)!, state.findNode('node-0')!), 'detached');
  assert.equal(state.attachState(state.findVolume(`kubernetes.io/csi/${DRIVER}^n1-v0`)!, state.findNode('node-1')!), 'attached');
  assert.equal(state.attachState(v2, state.findNode('node-2')!), 'attached');
});

test('the second look stops between node groups once cancelled (a stop waits for one live read, not all)', async () => {
  const { state, plugins } = fixture(5);
  const plugin = plugins.findAttachablePluginBySpec({} as VolumeSpec) as ReturnType<typeof createFakeAttachablePlugin>;
  const asked: string[] = [];
  let cancel = false;
  Object.assign(plugin, {
    async recheckAttached(specs: readonly VolumeSpec[], nodeName: string) {
      asked.push(nodeName);
      cancel = true; // the stop comes while the first look is out
      return specs.map(() => false);
    },
  });
  const { removed } = await verifyAttachedVolumes({ state, plugins }, { budgetMs: 0, cancelled: () => cancel && asked.length > 0 });
  assert.equal(asked.length, 1, `second looks asked after the cancel: ${asked.join(', ')}`);
  assert.equal(removed, 1, 'the group already asked is settled');
});
