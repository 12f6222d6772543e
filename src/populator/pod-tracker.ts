/**
 * PodTracker: which (volume, node) pairs the populator added each pod to, and which pods name
 * each PVC. It lets a pod's removal undo exactly what its addition did (names, not ids: ids
 * may be recycled), and the PVC worker (C8) find the pods waiting for a claim to bind.
 */
import { flatCopy } from '../cache/flat-copy.js';
import { KeySets } from './key-sets.js';

export interface TrackedPod {
  uid: string;
  namespace: string;
  /**
   * `namespace/name`, the pod's key in the informer cache, flat; for a pod naming claims the
   * same instance the claim index holds, so it costs no memory of its own. The C9 pass looks the
   * pod up by it once a minute: a stored string's hash is cached, where a key built per lookup
   * was a concatenation, a flattening copy and a hash for each of a million pods.
   */
  key: string;
  nodeName: string;
  /**
   * Unique volume names added to the desired state for this pod on `nodeName`, without repeats;
   * a lone volume (the common case) as the string itself, to save an array per pod. Read it
   * through {@link trackedVolumes}; change it through the tracker.
   */
  volumes: string | string[] | undefined;
}

/** The volumes of a tracked pod, as a list (a copy: callers may change the pod while iterating). */
export function trackedVolumes(t: TrackedPod): readonly string[] {
  const v = t.volumes;
  return v === undefined ? [] : typeof v === 'string' ? [v] : [...v];
}

export class PodTracker {
  private readonly byUid = new Map<string, TrackedPod>();
  /** `namespace/claim` → pod keys (`namespace/name`) of scheduled pods naming it. */
  private readonly claims = new KeySets();
  /** pod key → the claim keys it names, in volume order (a lone claim as the string itself). */
  private readonly claimsOfPod = new Map<string, string | string[]>();

  get(uid: string): TrackedPod | undefined {
    return this.byUid.get(uid);
  }

  /** Starts tracking a pod; `key` (its `namespace/name`) must be flat, as {@link setClaims} returns it or `flatCopy` makes it. */
  create(uid: string, namespace: string, key: string, nodeName: string): TrackedPod {
    const t: TrackedPod = { uid, namespace, key, nodeName, volumes: undefined };
    this.byUid.set(uid, t);
    return t;
  }

  delete(uid: string): void {
    this.byUid.delete(uid);
  }

  /** Records that the pod was added to `unique`'s desired pair; a no-op when already recorded. */
  addVolume(t: TrackedPod, unique: string): void {
    const v = t.volumes;
    if (v === undefined) t.volumes = unique;
    else if (typeof v === 'string') {
      if (v !== unique) t.volumes = [v, unique];
    } else if (!v.includes(unique)) v.push(unique);
  }

  /** Forgets `unique` for the pod. */
  removeVolume(t: TrackedPod, unique: string): void {
    const v = t.volumes;
    if (v === unique) t.volumes = undefined;
    else if (Array.isArray(v)) {
      const i = v.indexOf(unique);
      if (i >= 0) v.splice(i, 1);
    }
  }

  values(): IterableIterator<TrackedPod> {
    return this.byUid.values();
  }

  get size(): number {
    return this.byUid.size;
  }

  /**
   * Replaces the claims a pod (by `namespace/name`) names with the `claimName`s of its volumes.
   * Unchanged claims (every re-processing of a pod) cost one lookup and no allocation. Returns the
   * flat copy of `podKey` it stored when it stored the claims anew, else undefined.
   */
  setClaims(podKey: string, namespace: string, volumes: ReadonlyArray<{ readonly claimName?: string | undefined }>): string | undefined {
    const prev = this.claimsOfPod.get(podKey);
    if (prev !== undefined ? sameClaims(prev, namespace, volumes) : !volumes.some((v) => v.claimName)) return undefined;
    this.clearClaims(podKey);
    // Flat copies: these keys live as long as the pod (see flat-copy.ts).
    const keys: string[] = [];
    for (const v of volumes) if (v.claimName) keys.push(flatCopy(`${namespace}/${v.claimName}`));
    if (keys.length === 0) return undefined;
    const key = flatCopy(podKey);
    this.claimsOfPod.set(key, keys.length === 1 ? keys[0]! : keys);
    for (const k of keys) this.claims.add(k, key);
    return key;
  }

  clearClaims(podKey: string): void {
    const keys = this.claimsOfPod.get(podKey);
    if (keys === undefined) return;
    this.claimsOfPod.delete(podKey);
    if (typeof keys === 'string') this.claims.delete(keys, podKey);
    else for (const k of keys) this.claims.delete(k, podKey);
  }

  /** Pod keys naming the claim `namespace/name`. */
  podsOfClaim(claimKey: string): readonly string[] {
    return this.claims.members(claimKey);
  }
}

/** Whether the non-empty `claimName`s of `volumes` are, in order, the claims of `keys` (`namespace/claimName`). */
function sameClaims(keys: string | readonly string[], namespace: string, volumes: ReadonlyArray<{ readonly claimName?: string | undefined }>): boolean {
  const count = typeof keys === 'string' ? 1 : keys.length;
  let i = 0;
  for (const v of volumes) {
    const name = v.claimName;
    if (!name) continue;
    const k = i >= count ? undefined : typeof keys === 'string' ? keys : keys[i];
    i++;
    if (k === undefined || k.length !== namespace.length + 1 + name.length || !k.endsWith(name) || !k.startsWith(namespace) || k.charCodeAt(namespace.length) !== 47 /* '/' */) return false;
  }
  return i === count;
}
