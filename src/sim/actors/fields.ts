/**
 * Typed reads of the fields the actors use. Store objects may come from any client
 * (kubectl, tests), so every read checks the shape and falls back to "absent".
 */
import type { KubeObject } from '../store/sim-store.js';

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Rec) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

const spec = (o: KubeObject) => rec(o.spec);
const status = (o: KubeObject) => rec(o.status);

export function podNodeName(o: KubeObject): string | undefined {
  return str(spec(o)?.nodeName) || undefined;
}

/** Claim names of the pod's persistentVolumeClaim volumes. */
export function podClaimNames(o: KubeObject): string[] {
  const out: string[] = [];
  for (const v of arr(spec(o)?.volumes)) {
    const claim = str(rec(rec(v)?.persistentVolumeClaim)?.claimName);
    if (claim) out.push(claim);
  }
  return out;
}

/** Phase Succeeded or Failed: the pod will never run again. */
export function podPhaseTerminal(o: KubeObject): boolean {
  const phase = str(status(o)?.phase);
  return phase === 'Succeeded' || phase === 'Failed';
}

/** Healthy as the controller sees it: a Ready condition with status True. */
export function nodeIsReady(o: KubeObject): boolean {
  for (const c of arr(status(o)?.conditions)) {
    const cond = rec(c);
    if (cond?.type === 'Ready') return cond.status === 'True';
  }
  return false;
}

export function nodeHasTaint(o: KubeObject, key: string): boolean {
  return arr(spec(o)?.taints).some((t) => rec(t)?.key === key);
}

/** Names listed in `status.volumesAttached` (objects with `name`) or `status.volumesInUse` (strings). */
export function nodeVolumeNames(o: KubeObject, field: 'volumesAttached' | 'volumesInUse'): string[] {
  const out: string[] = [];
  for (const v of arr(status(o)?.[field])) {
    const name = field === 'volumesInUse' ? str(v) : str(rec(v)?.name);
    if (name) out.push(name);
  }
  return out;
}

export function pvcVolumeName(o: KubeObject | undefined): string | undefined {
  return (o && str(spec(o)?.volumeName)) || undefined;
}

export function pvClaimRef(o: KubeObject): { namespace: string; name: string } | undefined {
  const ref = rec(spec(o)?.claimRef);
  const namespace = str(ref?.namespace);
  const name = str(ref?.name);
  return namespace && name ? { namespace, name } : undefined;
}

export function pvCsiSource(o: KubeObject): { driver: string; handle: string } | undefined {
  const csi = rec(spec(o)?.csi);
  const driver = str(csi?.driver);
  const handle = str(csi?.volumeHandle);
  return driver && handle ? { driver, handle } : undefined;
}

/** Multi-attach is forbidden when every access mode is ReadWriteOnce or ReadWriteOncePod (as upstream). */
export function pvMultiAttachForbidden(o: KubeObject): boolean {
  const modes = arr(spec(o)?.accessModes).filter((m): m is string => typeof m === 'string');
  if (modes.length === 0) return false;
  return modes.every((m) => m === 'ReadWriteOnce' || m === 'ReadWriteOncePod');
}

export interface AttachmentSpec {
  attacher: string;
  nodeName: string;
  pvName: string | undefined;
}

export function vaSpec(o: KubeObject): AttachmentSpec | undefined {
  const s = spec(o);
  const attacher = str(s?.attacher);
  const nodeName = str(s?.nodeName);
  if (!attacher || !nodeName) return undefined;
  return { attacher, nodeName, pvName: str(rec(s?.source)?.persistentVolumeName) || undefined };
}

export function vaAttached(o: KubeObject): boolean {
  return status(o)?.attached === true;
}
