// The scrape-time sources as the controller wires them (O: upstream's state series).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorldState, type WorldState } from '../../src/cache/world-state.js';
import { wireMetrics } from '../../src/manager/wire-metrics.js';
import { createControllerMetrics } from '../../src/metrics/controller-metrics.js';

const EBS = 'kubernetes.io/csi:ebs.csi.aws.com';

/** A volume as the populator leaves it once a pod resolved it: info and plugin label. */
function resolvedVolume(state: WorldState, handle: string) {
  const v = state.internVolume(`kubernetes.io/csi/ebs.csi.aws.com^${handle}`);
  state.setVolumeInfo(v, { specName: `pv-${handle}`, pvName: `pv-${handle}`, plugin: EBS, csi: { driver: 'ebs.csi.aws.com', volumeHandle: handle }, accessModes: ['ReadWriteOnce'], migrated: false });
  state.setVolumePlugin(v, EBS);
  return v;
}

async function series(metrics: ReturnType<typeof createControllerMetrics>, name: string): Promise<string[]> {
  return (await metrics.registry.metrics()).split('\n').filter((l) => l.startsWith(`${name}{`));
}

describe('wireMetrics', () => {
  it('labels total_volumes with the fully qualified plugin and leaves spec-less volumes out', async () => {
    const state = createWorldState();
    const metrics = createControllerMetrics({ processMetrics: false });
    wireMetrics({ metrics, state, reflectors: [] });
    assert.deepEqual(await series(metrics, 'attachdetach_controller_total_volumes'), [], 'no series for an empty state');
    const n = state.internNode('node-1');
    state.setNodeManaged(n);
    const v = resolvedVolume(state, 'vol-1');
    state.addDesiredPod(v, n, 'uid-1');
    state.markAttached(v, n);
    state.markAttached(state.internVolume('kubernetes.io/csi/ebs.csi.aws.com^from-node-status'), n);
    assert.deepEqual((await series(metrics, 'attachdetach_controller_total_volumes')).sort(), [
      `attachdetach_controller_total_volumes{plugin_name="${EBS}",state="actual_state_of_world"} 1`,
      `attachdetach_controller_total_volumes{plugin_name="${EBS}",state="desired_state_of_world"} 1`,
    ]);
  });

  it('counts pod volumes per node and plugin with --per-node-volume-metric', async () => {
    const state = createWorldState();
    const metrics = createControllerMetrics({ processMetrics: false, perNodeVolumeMetric: true });
    wireMetrics({ metrics, state, reflectors: [] });
    const a = state.internNode('node-a');
    const b = state.internNode('node-b');
    state.setNodeManaged(a);
    state.setNodeManaged(b);
    const shared = resolvedVolume(state, 'shared');
    state.addDesiredPod(shared, a, 'uid-1');
    state.addDesiredPod(shared, a, 'uid-2');
    state.addDesiredPod(resolvedVolume(state, 'vol-b'), b, 'uid-3');
    assert.deepEqual((await series(metrics, 'storage_count_attachable_volumes_in_use')).sort(), [
      `storage_count_attachable_volumes_in_use{node="node-a",volume_plugin="${EBS}"} 2`,
      `storage_count_attachable_volumes_in_use{node="node-b",volume_plugin="${EBS}"} 1`,
    ]);
  });
});
