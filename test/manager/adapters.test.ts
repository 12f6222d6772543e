// The world-state adapter the node status updater reads (K3): which nodes it is told to write.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { reportedAttachments } from '../../src/manager/adapters.js';

function fleet(nodes: number) {
  const state = createWorldState();
  const ids = Array.from({ length: nodes }, (_, i) => {
    const id = state.internNode(`node-${i}`);
    state.setNodeManaged(id);
    return id;
  });
  return { state, ids, report: reportedAttachments(state) };
}

describe('reportedAttachments.flaggedNodes (K3)', () => {
  it('lists nothing while no node is flagged', () => {
    const { report } = fleet(50);
    assert.deepEqual([...report.flaggedNodes()], []);
  });

  it('lists exactly the flagged nodes by name, and a node no more once its set was taken', () => {
    const { state, ids, report } = fleet(5000);
    for (const i of [3, 1234, 4999]) state.markAttached(state.internVolume(`vol-${i}`), ids[i]!);
    assert.deepEqual([...report.flaggedNodes()].sort(), ['node-1234', 'node-3', 'node-4999']);
    assert.deepEqual(report.takeVolumesToReport('node-1234'), ['vol-1234']);
    assert.deepEqual([...report.flaggedNodes()].sort(), ['node-3', 'node-4999']);
    report.setNodeStatusUpdateNeeded('node-1234');
    assert.deepEqual([...report.flaggedNodes()].sort(), ['node-1234', 'node-3', 'node-4999']);
  });

  it('keeps listing a removed node while its status write is owed (K4), and not after', () => {
    const { state, ids, report } = fleet(10);
    state.markAttached(state.internVolume('vol'), ids[7]!);
    state.markDetached(state.findVolume('vol')!, ids[7]!);
    assert.equal(state.removeNode(ids[7]!), true);
    assert.deepEqual([...report.flaggedNodes()], ['node-7']);
    assert.deepEqual(report.takeVolumesToReport('node-7'), []);
    assert.deepEqual([...report.flaggedNodes()], []);
  });
});
