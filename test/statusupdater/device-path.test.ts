// K1 with A2/A6: the devicePath node status gave at start-up is written back, not replaced by ''.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { projectNode } from '../../src/kube/projections/node.js';
import { logger } from '../../src/log/logger.js';
import { reportedAttachments } from '../../src/manager/adapters.js';
import type { CsiTranslator, VolumePluginManager } from '../../src/plugins/index.js';
import { loadActualState } from '../../src/populator/actual-state-loader.js';
import { createNodeStatusUpdater, type VolumesAttachedPatch } from '../../src/statusupdater/node-status-updater.js';

const ISCSI = 'kubernetes.io/iscsi/10.0.0.1:3260:iqn.2001-04.com.example:storage:0';
const CSI = 'kubernetes.io/csi/ebs.csi.aws.com^vol-1';

test('the start-up status write keeps the devicePath read from node status; an attach sets it again', async () => {
  const raw = {
    metadata: { name: 'node-1', uid: 'u1', annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } },
    status: {
      conditions: [{ type: 'Ready', status: 'True' }],
      volumesInUse: [ISCSI],
      volumesAttached: [{ name: ISCSI, devicePath: '/dev/xvdba' }, { name: CSI, devicePath: '' }],
    },
  };
  const p = projectNode(raw);
  assert.ok(p.ok);
  const state = createWorldState();
  loadActualState({
    state, nodes: [p.value], volumeAttachments: [], pv: () => undefined,
    plugins: {} as VolumePluginManager, translator: {} as CsiTranslator, log: logger('test'),
  });
  const sent: VolumesAttachedPatch[] = [];
  const updater = createNodeStatusUpdater({
    api: { patchNodeStatus: async (_node, patch) => (sent.push(JSON.parse(JSON.stringify(patch))), 'patched') },
    attachments: reportedAttachments(state),
    nodes: { hasNode: () => true },
  });
  await updater.updateNodeStatuses();
  const byName = (list: VolumesAttachedPatch['status']['volumesAttached']) => [...(list ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  assert.equal(sent.length, 1);
  assert.deepEqual(byName(sent[0].status.volumesAttached), byName(raw.status.volumesAttached));

  // An attach success records the plugin's devicePath ('' for every plugin here), as upstream's does.
  const node = state.findNode('node-1')!;
  state.markAttached(state.findVolume(ISCSI)!, node);
  state.setStatusUpdateNeeded(node);
  await updater.updateNodeStatuses();
  assert.deepEqual(byName(sent[1]?.status.volumesAttached ?? null), byName([{ name: ISCSI, devicePath: '' }, { name: CSI, devicePath: '' }]));
});
