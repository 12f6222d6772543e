import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { createTimeline } from '../../src/dashboard/timeline.js';
import { createFakeEventRecorder } from '../../src/events/fake-event-recorder.js';
import { createControllerMetrics } from '../../src/metrics/controller-metrics.js';
import { createOperationExecutor } from '../../src/operations/operation-executor.js';
import { createFakeAttachablePlugin } from '../../src/plugins/fake-attachable-plugin.js';
import { createVolumePluginManager, type VolumeSpec } from '../../src/plugins/index.js';
import { volumeInfoFor } from '../../src/populator/volume-info.js';
import { settle } from '../support/mock-clock.js';
import fc from 'fast-check';
import type { ControllerEvent } from '../../src/operations/controller-observer.js';
import { ReferenceTimeline } from './timeline-reference.js';

describe('timeline', () => {
  it('records an attach failure with its retry time, then the retry and its success', async () => {
    let now = 5_000;
    const timeline = createTimeline({ now: () => now });
    const state = createWorldState();
    const plugin = createFakeAttachablePlugin();
    const executor = createOperationExecutor({
      state, plugins: createVolumePluginManager({ plugins: [plugin] }), metrics: createControllerMetrics({ processMetrics: false }),
      events: createFakeEventRecorder(), podName: () => undefined, liveVolumesInUse: async () => [], now: () => now,
      observer: timeline,
    });
    const unique = 'kubernetes.io/csi/test.csi.k8s.io^h1';
    const spec: VolumeSpec = { name: 'pv-1', origin: 'pv', source: { type: 'csi', driver: 'test.csi.k8s.io', volumeHandle: 'h1' }, accessModes: ['ReadWriteOnce'], readOnly: false, migrated: false };
    const v = state.internVolume(unique);
    state.setVolumeInfo(v, volumeInfoFor(unique, spec, 'kubernetes.io/csi'));
    state.setMultiAttachForbidden(v, true);
    const n = state.internNode('node-a');
    state.setNodeManaged(n);
    state.addDesiredPod(v, n, 'pod-1', spec);

    assert.equal(executor.startAttach(v, n), 'started');
    plugin.calls[0].finish(new Error('rpc error: code = DeadlineExceeded'));
    await settle('the failure', () => timeline.entries(unique).length === 2);
    now += 600;
    assert.equal(executor.startAttach(v, n), 'started');
    plugin.calls[1].finish();
    await settle('the success', () => timeline.entries(unique).length === 4);
    assert.deepEqual(timeline.entries(unique), [
      { at: 5_000, kind: 'attach-started', node: 'node-a' },
      { at: 5_000, kind: 'attach-failed', node: 'node-a', error: 'rpc error: code = DeadlineExceeded', retryAt: 5_501 },
      { at: 5_600, kind: 'attach-started', node: 'node-a' },
      { at: 5_600, kind: 'attach-succeeded', node: 'node-a' },
    ]);
  });

  it('bounds entries per volume and in all, oldest first out', () => {
    const timeline = createTimeline({ now: () => 1, maxEntries: 10, perVolume: 4 });
    for (let i = 0; i < 6; i++) timeline.observe({ kind: 'attach-started', volume: 'a', node: `n${i}` });
    assert.deepEqual(timeline.entries('a').map((e) => e.node), ['n2', 'n3', 'n4', 'n5']);
    for (let i = 0; i < 8; i++) timeline.observe({ kind: 'detach-started', volume: `v${i}`, node: 'x', forced: 'timeout' });
    assert.equal(timeline.size(), 10);
    assert.deepEqual(timeline.entries('a').map((e) => e.node), ['n4', 'n5']);
    assert.deepEqual(timeline.entries('v0'), [{ at: 1, kind: 'detach-started', node: 'x', forced: 'timeout' }]);
    for (let i = 0; i < 20; i++) timeline.observe({ kind: 'attach-started', volume: 'b', node: `m${i}` });
    assert.ok(timeline.size() <= 10);
    assert.deepEqual(timeline.entries('a'), []);
    assert.equal(timeline.entries('b').length, 4);
  });

  it('an observer that throws never reaches the executor', async () => {
    const state = createWorldState();
    const plugin = createFakeAttachablePlugin({ autoSucceed: true });
    const executor = createOperationExecutor({
      state, plugins: createVolumePluginManager({ plugins: [plugin] }), metrics: createControllerMetrics({ processMetrics: false }),
      events: createFakeEventRecorder(), podName: () => undefined, liveVolumesInUse: async () => [], now: () => 1,
      observer: { observe() { throw new Error('observer bug'); } },
    });
    const unique = 'kubernetes.io/csi/test.csi.k8s.io^h2';
    const spec: VolumeSpec = { name: 'pv-2', origin: 'pv', source: { type: 'csi', driver: 'test.csi.k8s.io', volumeHandle: 'h2' }, accessModes: ['ReadWriteOnce'], readOnly: false, migrated: false };
    const v = state.internVolume(unique);
    state.setVolumeInfo(v, volumeInfoFor(unique, spec, 'kubernetes.io/csi'));
    const n = state.internNode('node-a');
    state.setNodeManaged(n);
    state.addDesiredPod(v, n, 'pod-1', spec);
    assert.equal(executor.startAttach(v, n), 'started');
    await executor.idle();
    await settle('attached', () => state.attachState(v, n) === 'attached');
    assert.equal(state.isOperationPending(v, n), false);
  });

  it('the packed timeline answers as the array-based one, whatever the events and bounds', () => {
    const volume = fc.constantFrom('a', 'b', 'c', 'kubernetes.io/csi/d^h1', 'é');
    const node = fc.constantFrom('n1', 'n2', 'nöde');
    const text = fc.constantFrom('', 'rpc error', 'ns/p1', 'ns/p2', 'ünïcode');
    const event: fc.Arbitrary<ControllerEvent> = fc.oneof(
      fc.record({ kind: fc.constantFrom('desired-added' as const, 'desired-removed' as const), volume, node, pod: fc.option(text, { nil: undefined }) }, { requiredKeys: ['kind', 'volume', 'node'] }),
      fc.record({ kind: fc.constantFrom('attach-started' as const, 'attach-succeeded' as const, 'detach-succeeded' as const), volume, node }),
      fc.record({ kind: fc.constant('detach-started' as const), volume, node, forced: fc.constantFrom('timeout' as const, 'out-of-service' as const) }, { requiredKeys: ['kind', 'volume', 'node'] }),
      fc.record({
        kind: fc.constantFrom('attach-failed' as const, 'detach-failed' as const), volume, node, error: text,
        op: fc.constantFrom('attach' as const, 'detach' as const), retryAt: fc.integer({ min: 0, max: 1e9 }),
      }, { requiredKeys: ['kind', 'volume', 'node', 'error', 'op'] }),
      fc.record({ kind: fc.constant('multi-attach-blocked' as const), volume, node, holders: fc.array(node, { maxLength: 3 }) }),
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 200 }), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 8 }), (events, maxEntries, perVolume) => {
        let now = 0;
        const packed = createTimeline({ now: () => now, maxEntries, perVolume });
        const model = new ReferenceTimeline({ now: () => now, maxEntries, perVolume });
        for (const e of events) {
          now += 7;
          packed.observe(e);
          model.observe(e);
          assert.equal(packed.size(), model.size());
          assert.deepEqual(packed.entries(e.volume), model.entries(e.volume));
        }
        for (const v of ['a', 'b', 'c', 'kubernetes.io/csi/d^h1', 'é', 'unknown']) {
          assert.deepEqual(packed.entries(v), model.entries(v));
          assert.equal(packed.version(v), model.version(v));
        }
      }),
      { numRuns: 300 },
    );
  });
});
