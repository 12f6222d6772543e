/**
 * The pod tracker as plain Maps and strings: the reference model the packed tracker
 * (src/populator/pod-tracker.ts) is checked against by pod-tracker.test.ts.
 */

export interface ReferenceTrackedPod {
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
export function referenceVolumes(t: ReferenceTrackedPod): readonly string[] {
  const v = t.volumes;
  return v === undefined ? [] : typeof v === 'string' ? [v] : [...v];
}

export class ReferencePodTracker {
  private readonly byUid = new Map<string, ReferenceTrackedPod>();
  /** `namespace/claim` → pod keys (`namespace/name`) of scheduled pods naming it. */
  private readonly claims = new KeySets();
  /** pod key → the claim keys it names, in volume order (a lone claim as the string itself). */
  private readonly claimsOfPod = new Map<string, string | string[]>();

  get(uid: string): ReferenceTrackedPod | undefined {
    return this.byUid.get(uid);
  }

  /** Starts tracking a pod; `key` is its `namespace/name`. */
  create(uid: string, namespace: string, key: string, nodeName: string): ReferenceTrackedPod {
    const t: ReferenceTrackedPod = { uid, namespace, key, nodeName, volumes: undefined };
    this.byUid.set(uid, t);
    return t;
  }

  delete(uid: string): void {
    this.byUid.delete(uid);
  }

  /** Records that the pod was added to `unique`'s desired pair; a no-op when already recorded. */
  addVolume(t: ReferenceTrackedPod, unique: string): void {
    const v = t.volumes;
    if (v === undefined) t.volumes = unique;
    else if (typeof v === 'string') {
      if (v !== unique) t.volumes = [v, unique];
    } else if (!v.includes(unique)) v.push(unique);
  }

  /** Forgets `unique` for the pod. */
  removeVolume(t: ReferenceTrackedPod, unique: string): void {
    const v = t.volumes;
    if (v === unique) t.volumes = undefined;
    else if (Array.isArray(v)) {
      const i = v.indexOf(unique);
      if (i >= 0) v.splice(i, 1);
    }
  }

  values(): IterableIterator<ReferenceTrackedPod> {
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
    for (const v of volumes) if (v.claimName) keys.push((`${namespace}/${v.claimName}`));
    if (keys.length === 0) return undefined;
    const key = (podKey);
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

class KeySets {
  private readonly map = new Map<string, string | Set<string>>();

  add(key: string, member: string): void {
    const cur = this.map.get(key);
    if (cur === undefined) this.map.set(key, member);
    else if (typeof cur === 'string') {
      if (cur !== member) this.map.set(key, new Set([cur, member]));
    } else cur.add(member);
  }

  delete(key: string, member: string): void {
    const cur = this.map.get(key);
    if (cur === undefined) return;
    if (typeof cur === 'string') {
      if (cur === member) this.map.delete(key);
    } else if (cur.delete(member) && cur.size === 0) this.map.delete(key);
  }

  /** The members of `key` (a copy: callers may mutate the sets while iterating it). */
  members(key: string): readonly string[] {
    const cur = this.map.get(key);
    return cur === undefined ? [] : typeof cur === 'string' ? [cur] : [...cur];
  }

  /** Number of keys with at least one member. */
  get size(): number {
    return this.map.size;
  }
}
