/**
 * What still needs the attach lock of a PersistentVolume naming a node (the lock sweep's and the
 * attach lock's `needed`: src/sharding/lock-sweep.ts). Undefined only when none of these holds,
 * each read from this replica's caches and state:
 * - a VolumeAttachment of the PV on the node (the VolumeAttachment cache);
 * - the volume desired on the node, or attached or uncertain there (the world state);
 * - an operation of this replica's executor on the volume, other than one on `except`.
 *
 * A PV the PV cache does not hold, or not a CSI one, cannot be placed in the state: its lock is
 * always needed (kept).
 */
import type { WorldState } from '../cache/world-state.js';
import type { PvRecord } from '../kube/projections/index.js';
import { csiUniqueVolumeName } from '../plugins/index.js';
import type { AttachmentsByPv } from './attachments-by-pv.js';

export interface LockNeedsDeps {
  state: WorldState;
  pvs: { get(name: string): PvRecord | undefined };
  attachments: Pick<AttachmentsByPv, 'nodesOf'>;
}

export type LockNeeds = (pv: string, node: string, except?: string) => string | undefined;

export function createLockNeeds(d: LockNeedsDeps): LockNeeds {
  return (pvName, nodeName, except) => {
    if (d.attachments.nodesOf(pvName).has(nodeName)) return `a VolumeAttachment of ${pvName} exists on node ${nodeName}`;
    const csi = d.pvs.get(pvName)?.csi;
    if (csi === undefined) return `PersistentVolume ${pvName} is not a CSI volume in the cache`;
    const { state } = d;
    const volume = state.findVolume(csiUniqueVolumeName(csi.driver, csi.volumeHandle));
    if (volume === undefined) return undefined; // neither desired nor attached anywhere here, no operation
    const node = state.findNode(nodeName);
    const pair = node === undefined ? undefined : state.pair(volume, node);
    if (pair !== undefined && pair.desiredPods > 0) return `the volume is desired on node ${nodeName}`;
    if (pair !== undefined && pair.attachState !== 'detached') return `the volume is ${pair.attachState} on node ${nodeName}`;
    let running: string | undefined;
    state.forEachPairOfVolume(volume, (p) => {
      if (running !== undefined) return;
      const op = state.pendingOperationFor(volume, p.node);
      if (op === undefined) return;
      const on = state.nodeName(op.node);
      if (on !== except) running = `${op.op} of the volume running on node ${on}`;
    });
    return running;
  };
}
