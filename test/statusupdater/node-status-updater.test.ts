import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createNodeStatusUpdater,
  volumesAttachedPatch,
  type NodeStatusApi,
  type ReportedAttachments,
  type VolumesAttachedPatch,
} from '../../src/statusupdater/node-status-updater.js';

/** Actual state reduced to what the updater reads: report sets and flags. */
function fakeState(sets: Record<string, string[]>) {
  const report = new Map(Object.entries(sets).map(([n, v]) => [n, new Set(v)]));
  const flagged = new Set(Object.keys(sets));
  const state: ReportedAttachments & { flagged: Set<string>; report: Map<string, Set<string>> } = {
    flagged,
    report,
    flaggedNodes: () => [...flagged],
    takeVolumesToReport(node) {
      if (!flagged.delete(node)) return undefined;
      return [...(report.get(node) ?? [])].map((name) => ({ name, devicePath: '' }));
    },
    setNodeStatusUpdateNeeded: (node) => void flagged.add(node),
  };
  return state;
}

type Answer = 'patched' | 'not-found' | Error;

/** A NodeStatusApi whose answers are chosen per node; `hold` keeps requests pending until released. */
function fakeApi(answers: Record<string, Answer> = {}) {
  const calls: Array<{ node: string; patch: VolumesAttachedPatch }> = [];
  const held: Array<() => void> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const api: NodeStatusApi & { calls: typeof calls; hold: boolean; release(): void; maxInFlight(): number; inFlight(): number } = {
    calls,
    hold: false,
    async patchNodeStatus(node, patch) {
      calls.push({ node, patch: JSON.parse(JSON.stringify(patch)) });
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        if (api.hold) await new Promise<void>((r) => held.push(r));
        const a = answers[node] ?? 'patched';
        if (a instanceof Error) throw a;
        return a;
      } finally {
        inFlight--;
      }
    },
    release: () => held.splice(0).forEach((r) => r()),
    maxInFlight: () => maxInFlight,
    inFlight: () => inFlight,
  };
  return api;
}

const allNodes = { hasNode: () => true };
const tick = () => new Promise<void>((r) => setImmediate(r));

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await tick();
  }
}

test('K1/K2/K5: one merge patch of status.volumesAttached per flagged node; empty set clears the field', async () => {
  const state = fakeState({ a: ['kubernetes.io/csi/d^1', 'kubernetes.io/csi/d^2'], b: [] });
  state.report.set('c', new Set(['kubernetes.io/csi/d^3'])); // not flagged: not written
  const api = fakeApi();
  const updater = createNodeStatusUpdater({ api, attachments: state, nodes: allNodes });
  const summary = await updater.updateNodeStatuses();
  assert.deepEqual(summary, { written: 2, unchanged: 0, nodeNotFound: 0, failed: 0 });
  const byNode = Object.fromEntries(api.calls.map((c) => [c.node, c.patch]));
  assert.deepEqual(Object.keys(byNode).sort(), ['a', 'b']);
  assert.deepEqual(byNode.a, {
    status: { volumesAttached: [{ name: 'kubernetes.io/csi/d^1', devicePath: '' }, { name: 'kubernetes.io/csi/d^2', devicePath: '' }] },
  });
  assert.deepEqual(byNode.b, { status: { volumesAttached: null } });
  assert.equal(state.flagged.size, 0, 'reading the set cleared the flags');
  assert.equal((await updater.updateNodeStatuses()).written, 0, 'nothing flagged, nothing written');
  assert.deepEqual(volumesAttachedPatch([]), { status: { volumesAttached: null } });
});

test('K4: a failed PATCH re-flags the node and the next pass writes it', async () => {
  const state = fakeState({ a: ['u1'], b: ['u2'] });
  const answers: Record<string, Answer> = { a: new Error('etcdserver: request timed out') };
  const api = fakeApi(answers);
  const updater = createNodeStatusUpdater({ api, attachments: state, nodes: allNodes });
  assert.deepEqual(await updater.updateNodeStatuses(), { written: 1, unchanged: 0, nodeNotFound: 0, failed: 1 });
  assert.deepEqual([...state.flagged], ['a']);
  delete answers.a;
  assert.equal(await updater.updateNodeStatusForNode('a'), 'written');
  assert.equal(state.flagged.size, 0);
  assert.equal(api.calls.filter((c) => c.node === 'a').length, 2);
});

test('K4: NotFound, or a node absent from the cache, is dropped without re-flagging', async () => {
  const state = fakeState({ gone: ['u1'], uncached: ['u2'] });
  const api = fakeApi({ gone: 'not-found' });
  const updater = createNodeStatusUpdater({ api, attachments: state, nodes: { hasNode: (n) => n !== 'uncached' } });
  assert.deepEqual(await updater.updateNodeStatuses(), { written: 0, unchanged: 0, nodeNotFound: 2, failed: 0 });
  assert.deepEqual(api.calls.map((c) => c.node), ['gone'], 'no request for a node the cache does not have');
  assert.equal(state.flagged.size, 0);
  assert.equal(await updater.updateNodeStatusForNode('gone'), 'unchanged');
});

test('a pass keeps at most maxInFlight PATCHes in flight', async () => {
  const sets: Record<string, string[]> = {};
  for (let i = 0; i < 100; i++) sets[`node-${i}`] = [`u${i}`];
  const state = fakeState(sets);
  const api = fakeApi();
  api.hold = true;
  const updater = createNodeStatusUpdater({ api, attachments: state, nodes: allNodes, maxInFlight: 32 });
  const pass = updater.updateNodeStatuses();
  await until(() => api.inFlight() === 32, '32 requests in flight');
  api.hold = false;
  api.release();
  assert.equal((await pass).written, 100);
  assert.equal(api.maxInFlight(), 32);
  assert.throws(() => createNodeStatusUpdater({ api, attachments: state, nodes: allNodes, maxInFlight: 0 }), /maxInFlight must be a positive integer/);
});

test('writes to one node are serialised and each carries the set read when it is sent (F8)', async () => {
  const state = fakeState({ a: ['u1', 'u2'] });
  const api = fakeApi();
  api.hold = true;
  const updater = createNodeStatusUpdater({ api, attachments: state, nodes: allNodes });
  const pass = updater.updateNodeStatuses();
  await until(() => api.calls.length === 1, 'the pass write');
  // The reconciler removes u2 before detaching it and asks for that node's write.
  state.report.get('a')!.delete('u2');
  state.setNodeStatusUpdateNeeded('a');
  const forDetach = updater.updateNodeStatusForNode('a');
  await tick();
  assert.equal(api.calls.length, 1, 'second write waits for the first');
  api.hold = false;
  api.release();
  assert.equal(await forDetach, 'written');
  await pass;
  assert.deepEqual(api.calls.map((c) => c.patch.status.volumesAttached?.map((v) => v.name)), [['u1', 'u2'], ['u1']]);
});

test('reads and restores a report set only when the state is idle (writes run beside plans)', async () => {
  const state = fakeState({ n1: ['v1'] });
  const deferred: Array<() => void> = [];
  let planning = true;
  state.whenIdle = (fn) => (planning ? deferred.push(fn) : fn());
  const api = fakeApi({ n1: new Error('boom') });
  const updater = createNodeStatusUpdater({ api, attachments: state, nodes: allNodes });
  const outcome = updater.updateNodeStatusForNode('n1');
  await tick();
  assert.equal(api.calls.length, 0, 'nothing read or sent while the plan runs');
  assert.ok(state.flagged.has('n1'));
  planning = false;
  deferred.splice(0).forEach((fn) => fn());
  assert.equal(await outcome, 'failed');
  assert.equal(api.calls.length, 1);
  assert.ok(state.flagged.has('n1'), 'the failed write flagged the node again');
});

test('close ends a running round after its writes in flight and sends nothing more', async () => {
  const sets: Record<string, string[]> = {};
  for (let i = 0; i < 20; i++) sets[`n${i}`] = [`v${i}`];
  const state = fakeState(sets);
  const api = fakeApi();
  api.hold = true;
  const updater = createNodeStatusUpdater({ api, attachments: state, nodes: allNodes, maxInFlight: 2 });
  const round = updater.updateNodeStatuses();
  await tick();
  assert.equal(api.calls.length, 2, 'two writes in flight');
  updater.close();
  api.release();
  const summary = await round;
  assert.equal(api.calls.length, 2, 'no write started after close');
  assert.equal(summary.written, 2);
  assert.equal(await updater.updateNodeStatusForNode('n5'), 'failed', 'a write asked for after close is not sent');
  assert.equal(api.calls.length, 2);
  assert.ok(state.flagged.has('n5'), 'its flag stays set');
});
