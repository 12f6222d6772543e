/**
 * Start-up fill of the actual state (A2–A3), run once after every informer synced and before
 * the desired state is filled (A4) and the reconciler starts:
 *  - every Node (managed or not): each `status.volumesAttached` entry ⇒ Attached (and in the
 *    report set, so the first pass re-writes the status, A6); `volumesInUse` ⇒ mounted set;
 *  - every VolumeAttachment naming a PV that exists and resolves to an attachable plugin ⇒
 *    Uncertain on its node unless already known. `status.attached` is not consulted (A3).
 * Together this loses no attachment across a restart and creates no duplicate VolumeAttachment.
 */
import type { WorldState } from '../cache/world-state.js';
import type { NodeRecord, PvRecord, VolumeAttachmentRecord } from '../kube/projections/index.js';
import type { CsiTranslator, VolumePluginManager } from '../plugins/index.js';
import { isMultiAttachAllowed, splitUniqueVolumeName } from '../plugins/index.js';
import type { Logger } from '../log/logger.js';
import { applyNodeRecord } from './node-events.js';
import { resolvePersistentVolume } from './volume-resolver.js';
import type { NodeConditionCounter } from './node-condition-counter.js';
import { volumeInfoFor, volumeInfoOf } from './volume-info.js';

export interface ActualStateLoaderDeps {
  state: WorldState;
  nodes: Iterable<NodeRecord>;
  volumeAttachments: Iterable<VolumeAttachmentRecord>;
  pv(name: string): PvRecord | undefined;
  plugins: VolumePluginManager;
  translator: CsiTranslator;
  log: Logger;
  conditions?: NodeConditionCounter;
}

export function loadActualState(d: ActualStateLoaderDeps): { attached: number; uncertain: number; skipped: number } {
  const { state } = d;
  let attached = 0;
  let uncertain = 0;
  let skipped = 0;
  for (const n of d.nodes) {
    applyNodeRecord(state, d.conditions, n, false); // the report set is rewritten anyway (A6)
    const node = state.internNode(n.name);
    for (let i = 0; i < n.volumesAttached.length; i++) {
      const name = n.volumesAttached[i];
      const vol = state.internVolume(name);
      if (!volumeInfoOf(state, vol)) {
        const plugin = splitUniqueVolumeName(name)?.pluginName ?? 'unknown';
        state.setVolumeInfo(vol, { uniqueName: state.volumeName(vol), pluginName: plugin });
      }
      state.markAttached(vol, node, n.devicePaths?.[i] ?? '');
      attached++;
    }
  }
  for (const va of d.volumeAttachments) {
    if (!va.pvName) { skipped++; continue; } // inline source: skipped (A3)
    const pv = d.pv(va.pvName);
    if (!pv) { skipped++; continue; }
    const r = resolvePersistentVolume(pv, va.nodeName, d);
    if (!r.ok) {
      skipped++;
      if (!r.quiet) d.log.warn({ va: va.name, reason: r.reason }, 'VolumeAttachment not loaded');
      continue;
    }
    const node = state.internNode(va.nodeName);
    const vol = state.internVolume(r.uniqueName);
    if (!volumeInfoOf(state, vol)?.spec) {
      const info = volumeInfoFor(state.volumeName(vol), r.spec, r.plugin.name);
      state.setVolumeInfo(vol, info);
      state.setVolumePlugin(vol, info.plugin);
      // The PV's access modes key its operations (I1) before any pod names it, as upstream's
      // actual-state entry carries the PV spec.
      state.setMultiAttachForbidden(vol, !isMultiAttachAllowed(r.spec));
    }
    if (state.attachState(vol, node) === 'detached') {
      state.markUncertain(vol, node);
      uncertain++;
    }
  }
  return { attached, uncertain, skipped };
}
