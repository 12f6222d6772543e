/**
 * The populator alone, on in-memory sources whose events the test fires: PV events re-process
 * exactly the pods of the claim bound to the PV (the claim its claimRef names, when that claim
 * names the PV), status-only PV updates are filtered, and the skipped-volume counts follow each
 * pod's last processing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import type { NodeRecord, PodRecord, PvRecord, PvcRecord, VolumeAttachmentRecord } from '../../src/kube/projections/index.js';
import { projectNode } from '../../src/kube/projections/index.js';
import { createDesiredStatePopulator } from '../../src/populator/desired-state-populator.js';
import { loadActualState } from '../../src/populator/actual-state-loader.js';
import { logger } from '../../src/log/logger.js';
import { csiOnly, FakeSource } from './fake-source.js';
import { createCsiPlugin, createCsiTranslator, createVolumePluginManager } from '../../src/plugins/index.js';

const DRIVER = 'unit.csi.fleet-attach.io';

const pvc = (name: string, volumeName: string, uid = `uid-${name}`): PvcRecord => ({ uid, namespace: 'ns', name, phase: volumeName ? 'Bound' : 'Pending', volumeName });
/** A PV whose claimRef names claim `ns/<claimUid without "uid-">` with uid `claimUid`. */
const pv = (name: string, claimUid: string, handle = name, phase = 'Bound'): PvRecord => ({
  name, phase, accessModes: ['ReadWriteOnce'], claimRef: { namespace: 'ns', name: claimUid.replace(/^uid-/, ''), uid: claimUid },
  csi: { driver: DRIVER, volumeHandle: handle, readOnly: false },
});
const podOf = (name: string, claims: string[], extra: PodRecord['volumes'] = []): PodRecord => ({
  uid: `uid-${name}`, namespace: 'ns', name, nodeName: 'node-a', phase: 'Running', allContainersNotRunning: false,
  volumes: [...claims.map((c, i) => ({ name: `v${i}`, kind: 'pvc' as const, claimName: c, sourceType: 'persistentVolumeClaim' })), ...extra],
});

function setup() {
  const state = createWorldState({});
  const pods = new FakeSource<PodRecord>((p) => `${p.namespace}/${p.name}`);
  const pvcs = new FakeSource<PvcRecord>((c) => `${c.namespace}/${c.name}`);
  const pvs = new FakeSource<PvRecord>((v) => v.name);
  const nodes = new FakeSource<NodeRecord>((n) => n.name);
  for (const n of ['node-a', 'node-b']) nodes.items.set(n, { name: n, uid: `uid-${n}`, managed: true, ready: true, outOfService: false, volumesInUse: [], volumesAttached: [] });
  const { plugins, translator } = csiOnly();
  const log = logger('populator-test');
  loadActualState({ state, nodes: nodes.values(), volumeAttachments: [], pv: (n) => pvs.items.get(n), plugins, translator, log });
  const populator = createDesiredStatePopulator({ state, pods, pvcs, pvs, nodes, plugins, translator, populatorPeriodMs: 3_600_000, listPodsPeriodMs: 3_600_000, log });
  const desired = () => state.counts().desiredPairs;
  const skipped = () => Object.fromEntries(populator.skippedVolumes().filter((r) => r.count > 0).map((r) => [r.reason, r.count]));
  return { state, pods, pvcs, pvs, populator, desired, skipped };
}

describe('desired-state populator: PV events', () => {
  it('a PV add re-processes the pods of the claim bound to it (claims listed before start included)', () => {
    const s = setup();
    s.pvcs.items.set('ns/listed', pvc('listed', 'pv-1'));
    s.pods.items.set('ns/p1', podOf('p1', ['listed']));
    s.populator.start();
    s.populator.addAllPods();
    assert.equal(s.desired(), 0);
    assert.deepEqual(s.skipped(), { pv_not_found: 1 });
    s.pvcs.upsert(pvc('by-event', 'pv-2'));
    s.pods.upsert(podOf('p2', ['by-event']));
    s.pods.upsert(podOf('p3', ['by-event'])); // two pods sharing a claim
    assert.deepEqual(s.skipped(), { pv_not_found: 3 });
    s.pvs.upsert(pv('pv-1', 'uid-listed'));
    assert.equal(s.desired(), 1);
    s.pvs.upsert(pv('pv-2', 'uid-by-event'));
    assert.equal(s.state.desiredPods(s.state.findVolume(`kubernetes.io/csi/${DRIVER}^pv-2`)!, s.state.findNode('node-a')!).length, 2);
    assert.deepEqual(s.skipped(), {});
    s.populator.stop();
  });

  it('a PV update re-processes only when binding, source or access modes changed', () => {
    const s = setup();
    s.populator.start();
    s.pvcs.upsert(pvc('c', 'pv-c'));
    s.pvs.upsert(pv('pv-c', 'someone-else'));
    s.pods.upsert(podOf('p', ['c']));
    assert.deepEqual(s.skipped(), { pv_claim_mismatch: 1 });
    const gets = s.pods.gets;
    s.pvs.upsert(pv('pv-c', 'someone-else', 'pv-c', 'Released')); // status only
    assert.equal(s.pods.gets, gets, 'status-only update: no pod re-processed');
    s.pvs.upsert(pv('pv-c', 'uid-c'));
    assert.ok(s.pods.gets > gets);
    assert.equal(s.desired(), 1);
    s.populator.stop();
  });

  it('a PV event reaches only the pods of the claim it names, when that claim is bound to it', () => {
    const s = setup();
    s.populator.start();
    s.pvcs.upsert(pvc('c', ''));
    s.pods.upsert(podOf('p', ['c']));
    assert.deepEqual(s.skipped(), { pvc_not_bound: 1 });
    const noPodProcessed = (what: string, fire: () => void) => {
      const gets = s.pods.gets;
      fire();
      assert.equal(s.pods.gets, gets, what);
    };
    noPodProcessed('claim unbound', () => s.pvs.upsert(pv('pv-new', 'uid-c')));
    s.pvcs.upsert(pvc('c', 'pv-new', 'uid-c'));
    assert.equal(s.desired(), 1, 'bound: the PVC event resolves it (C8)');
    noPodProcessed('the claim names another PV', () => s.pvs.upsert(pv('pv-old', 'uid-c')));
    // Another uid (a re-created claim): the pod is re-processed to report why its volume no
    // longer resolves (C4); nothing is removed (a resolution that fails never removes a pair).
    const gets = s.pods.gets;
    s.pvs.upsert({ ...pv('pv-new', 'uid-c'), claimRef: { namespace: 'ns', name: 'c', uid: 'uid-older' } });
    assert.ok(s.pods.gets > gets, 'the claim\'s pod was re-processed');
    assert.deepEqual(s.skipped(), { pv_claim_mismatch: 1 });
    assert.equal(s.desired(), 1, 'the pair stays');
    noPodProcessed('no claimRef', () => s.pvs.upsert({ ...pv('pv-other', 'uid-c'), claimRef: undefined } as PvRecord));
    s.pvcs.remove(pvc('c', 'pv-new'));
    noPodProcessed('claim gone', () => s.pvs.upsert(pv('pv-new', 'uid-c', 'other-handle')));
    s.populator.stop();
  });
});

describe('desired-state populator: a pod that moves (same uid; the API forbids it, a bad server may not)', () => {
  const setupMoved = () => {
    const s = setup();
    s.populator.start();
    s.pvcs.upsert(pvc('c', 'pv-1'));
    s.pvs.upsert(pv('pv-1', 'uid-c'));
    const on = (node: string) => {
      const v = s.state.findVolume(`kubernetes.io/csi/${DRIVER}^pv-1`);
      return v === undefined ? [] : s.state.desiredPods(v, s.state.findNode(node)!);
    };
    return { s, on };
  };

  it('its pairs follow it to the new node, and go with it when it is deleted', () => {
    const { s, on } = setupMoved();
    s.pods.upsert(podOf('p', ['c']));
    assert.deepEqual(on('node-a'), ['uid-p']);
    s.pods.upsert({ ...podOf('p', ['c']), nodeName: 'node-b' });
    assert.deepEqual(on('node-a'), []);
    assert.deepEqual(on('node-b'), ['uid-p']);
    s.pods.remove({ ...podOf('p', ['c']), nodeName: 'node-b' });
    assert.equal(s.desired(), 0);
    s.populator.stop();
  });

  it('unscheduled, its pairs go; C9 moves the pairs of a pod it finds on another node', () => {
    const { s, on } = setupMoved();
    s.pods.upsert(podOf('p', ['c']));
    s.pods.upsert({ ...podOf('p', ['c']), nodeName: '' });
    assert.equal(s.desired(), 0);
    s.pods.upsert(podOf('p', ['c']));
    s.pods.items.set('ns/p', { ...podOf('p', ['c']), nodeName: 'node-b' }); // no event
    s.populator.removeStalePods();
    assert.deepEqual(on('node-a'), []);
    assert.deepEqual(on('node-b'), ['uid-p']);
    s.populator.stop();
  });
});

describe('desired-state populator: volumes by PV (the inspection API)', () => {
  it('resolves a PV to the volume its pods resolved it to, only while the state has it', () => {
    const s = setup();
    s.populator.start();
    s.pvcs.upsert(pvc('c', 'pv-1'));
    s.pvs.upsert(pv('pv-1', 'uid-c', 'handle-1'));
    s.pvs.upsert(pv('pv-2', 'uid-d', 'handle-2')); // no pod: not in the state
    assert.deepEqual(s.populator.volumesForPv('pv-1'), []);
    s.pods.upsert(podOf('p', ['c']));
    assert.deepEqual(s.populator.volumesForPv('pv-1'), [`kubernetes.io/csi/${DRIVER}^handle-1`]);
    assert.deepEqual(s.populator.volumesForPv('pv-2'), []);
    assert.deepEqual(s.populator.volumesForPv('no-such-pv'), []);
    s.populator.stop();
  });
});

describe('desired-state populator: skipped volumes', () => {
  it('counts by reason, replaces a pod\'s counts on re-processing, drops them with the pod', () => {
    const s = setup();
    s.populator.start();
    s.pvcs.upsert(pvc('bound', 'pv-b'));
    s.pvs.upsert(pv('pv-b', 'uid-bound'));
    const mixed = podOf('m', ['missing', 'bound'], [
      { name: 'inline', kind: 'csi-inline', driver: 'x', sourceType: 'csi' },
      { name: 'tmp', kind: 'other', sourceType: 'emptyDir' },
      { name: 'ebs', kind: 'intree', intree: { type: 'awsElasticBlockStore', fields: {} }, sourceType: 'awsElasticBlockStore' },
    ]);
    s.pods.upsert(mixed);
    assert.deepEqual(s.skipped(), { pvc_not_found: 1, not_attachable: 1, unsupported_source: 1 });
    assert.equal(s.desired(), 1);
    s.pvcs.upsert(pvc('missing', ''));
    s.pods.upsert({ ...mixed, phase: 'Running' }); // an update re-processes
    assert.deepEqual(s.skipped(), { pvc_not_bound: 1, not_attachable: 1, unsupported_source: 1 });
    s.pods.upsert({ ...mixed, phase: 'Succeeded' });
    assert.deepEqual(s.skipped(), {});
    s.populator.stop();
  });

  it('the C9 pass drops the counts of pods that vanished without an event', () => {
    const s = setup();
    s.populator.start();
    s.pods.upsert(podOf('gone', ['missing']));
    s.pods.upsert(podOf('stays', ['missing']));
    assert.deepEqual(s.skipped(), { pvc_not_found: 2 });
    s.pods.items.delete('ns/gone'); // no delete event (e.g. a lost tombstone)
    s.populator.removeStalePods();
    assert.deepEqual(s.skipped(), { pvc_not_found: 1 });
    s.populator.stop();
  });
});

describe('desired-state populator: pod updates that change nothing it reads', () => {
  /** A started populator with claim `c` bound to PV `pv-c` (unless `bound` is false) and pod `p` naming `claims`. */
  const started = (claims: string[], bound = true) => {
    const s = setup();
    s.populator.start();
    s.pvcs.upsert(pvc('c', bound ? 'pv-c' : ''));
    if (bound) s.pvs.upsert(pv('pv-c', 'uid-c'));
    const pod = podOf('p', claims);
    s.pods.upsert(pod);
    return { s, pod };
  };

  it('are not processed again once the pod is settled: no claim is looked up, the pair stays', () => {
    const { s, pod } = started(['c']);
    assert.equal(s.desired(), 1);
    const gets = s.pvcs.gets;
    for (let i = 0; i < 3; i++) s.pods.touch(pod);
    assert.equal(s.pvcs.gets, gets, 'no volume resolved again');
    assert.equal(s.desired(), 1);
    s.pods.upsert({ ...pod }); // a changed projection (a new object) is processed as before
    assert.ok(s.pvcs.gets > gets);
    s.populator.stop();
  });

  it('are processed again when the last processing skipped a volume: a claim bound since is picked up, as upstream\'s pod updates do', () => {
    const { s, pod } = started(['c'], false);
    assert.deepEqual(s.skipped(), { pvc_not_bound: 1 });
    assert.equal(s.desired(), 0);
    // Bound without an event reaching the populator (the claim's event still on its way).
    s.pvcs.items.set('ns/c', pvc('c', 'pv-c'));
    s.pvs.items.set('pv-c', pv('pv-c', 'uid-c'));
    s.pods.touch(pod);
    assert.equal(s.desired(), 1);
    assert.deepEqual(s.skipped(), {});
    s.populator.stop();
  });

  it('are processed again when a pair the pod was added to no longer names it', () => {
    const { s, pod } = started(['c']);
    const vol = s.state.volumeIds(-1, 10)[0]!;
    const node = s.state.findNode('node-a')!;
    assert.ok(s.state.hasDesiredPod(vol, node, pod.uid));
    s.state.removeDesiredPod(vol, node, pod.uid);
    assert.equal(s.desired(), 0);
    s.pods.touch(pod);
    assert.equal(s.desired(), 1);
    assert.ok(s.state.hasDesiredPod(vol, node, pod.uid));
    s.populator.stop();
  });

  it('are processed again when a volume shares its unique name with another of the pod\'s (not one tracked entry per volume)', () => {
    const { s, pod } = started(['c', 'c']);
    const gets = s.pvcs.gets;
    s.pods.touch(pod);
    assert.ok(s.pvcs.gets > gets, 'counted as not settled, so processed');
    assert.equal(s.desired(), 1);
    s.populator.stop();
  });
});

describe('start-up loader', () => {
  it('a VolumeAttachment of a ReadWriteOnce PV no pod names yet is loaded uncertain, its volume multi-attach-forbidden (A3, I1)', () => {
    const state = createWorldState({});
    const pvs = new Map<string, PvRecord>([['pv-rwo', pv('pv-rwo', 'uid-c')], ['pv-rwx', { ...pv('pv-rwx', 'uid-d'), accessModes: ['ReadWriteMany'] }]]);
    const csi = createCsiPlugin({ api: { create: async () => 'created', delete: async () => 'deleted' }, attachments: { get: () => undefined, onChange: () => () => undefined }, drivers: { attachRequired: () => true } });
    const va = (pvName: string): VolumeAttachmentRecord => ({ name: `csi-${pvName}`, attacher: DRIVER, nodeName: 'node-a', pvName, inline: false, attached: true, deleting: false });
    const r = loadActualState({
      state, nodes: [], volumeAttachments: [va('pv-rwo'), va('pv-rwx')], pv: (n) => pvs.get(n),
      plugins: createVolumePluginManager({ plugins: [csi] }), translator: createCsiTranslator({ isMigrated: () => false }), log: logger('loader-test'),
    });
    assert.equal(r.uncertain, 2);
    const rwo = state.findVolume(`kubernetes.io/csi/${DRIVER}^pv-rwo`)!;
    const rwx = state.findVolume(`kubernetes.io/csi/${DRIVER}^pv-rwx`)!;
    assert.equal(state.attachState(rwo, state.findNode('node-a')!), 'uncertain');
    assert.equal(state.multiAttachForbidden(rwo), true);
    assert.equal(state.multiAttachForbidden(rwx), false);
  });
});

describe('start-up loader: a node read in part', () => {
  it('is present, managed, healthy and its attached volume attached and mounted: nothing about it allows a detach', () => {
    const state = createWorldState({});
    const unique = `kubernetes.io/csi/${DRIVER}^pv-1`;
    const projected = projectNode({
      metadata: { name: 'node-x', uid: 'ux', annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } },
      status: { conditions: [{ type: 'Ready', status: 'True' }], volumesInUse: [unique, 7], volumesAttached: [{ name: unique, devicePath: 0 }] },
    });
    assert.equal(projected.ok, true);
    const nodeRecord = (projected as { value: NodeRecord }).value;
    const csi = createCsiPlugin({ api: { create: async () => 'created', delete: async () => 'deleted' }, attachments: { get: () => undefined, onChange: () => () => undefined }, drivers: { attachRequired: () => true } });
    loadActualState({
      state, nodes: [nodeRecord], volumeAttachments: [], pv: () => undefined,
      plugins: createVolumePluginManager({ plugins: [csi] }), translator: createCsiTranslator({ isMigrated: () => false }), log: logger('loader-test'),
    });
    const node = state.findNode('node-x')!;
    assert.deepEqual([state.node(node)?.managed, state.node(node)?.healthy, state.node(node)?.volumesInUse], [true, true, null]);
    const pair = state.pair(state.findVolume(unique)!, node)!;
    assert.deepEqual([pair.attachState, pair.mounted], ['attached', true]);
  });
});

describe('desired-state populator: the start-up fill (A4)', () => {
  const many = (s: ReturnType<typeof setup>, n: number) => {
    for (let i = 0; i < n; i++) {
      s.pvcs.items.set(`ns/c${i}`, pvc(`c${i}`, `pv-${i}`));
      s.pvs.items.set(`pv-${i}`, pv(`pv-${i}`, `uid-c${i}`));
      s.pods.items.set(`ns/p${i}`, podOf(`p${i}`, [`c${i}`]));
    }
  };

  it('fills every pod in slices, letting timers run between them, as the one-block pass would', async () => {
    const s = setup();
    many(s, 20_000);
    s.populator.start();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const done = await s.populator.fill(() => false);
    clearInterval(timer);
    assert.equal(done, true);
    assert.equal(s.desired(), 20_000);
    assert.ok(ticks > 0, 'a timer ran during the fill (a lease renewal would have)');
    s.populator.stop();
  });

  it('goes on past a pod whose processing throws: the others are filled', async () => {
    const s = setup();
    many(s, 100);
    const get = s.pvcs.get.bind(s.pvcs);
    s.pvcs.get = (key: string) => {
      if (key === 'ns/c7' || key === 'ns/c42') throw new Error('claim lookup failed');
      return get(key);
    };
    s.populator.start();
    assert.equal(await s.populator.fill(() => false), true);
    assert.equal(s.desired(), 98);
    s.populator.stop();
  });

  it('stops when cancelled and says so', async () => {
    const s = setup();
    many(s, 20_000);
    s.populator.start();
    let asked = 0;
    assert.equal(await s.populator.fill(() => ++asked > 3), false); // three slices, then cancelled
    assert.ok(s.desired() > 0 && s.desired() < 20_000, `stopped part way: ${s.desired()}`);
    s.populator.stop();
  });
});
