/**
 * PodTracker: which (volume, node) pairs the populator added each pod to, and which pods name
 * each PVC. It lets a pod's removal undo exactly what its addition did (names, not ids: ids
 * may be recycled), and the PVC worker (C8) find the pods waiting for a claim to bind.
 */
export interface TrackedPod {
  uid: string;
  namespace: string;
  name: string;
  nodeName: string;
  /** Unique volume names added to the desired state for this pod on `nodeName`. */
  volumes: Set<string>;
}

export class PodTracker {
  private readonly byUid = new Map<string, TrackedPod>();
  /** `namespace/claim` → pod keys (`namespace/name`) of scheduled pods naming it. */
  private readonly claims = new Map<string, Set<string>>();
  private readonly claimsOfPod = new Map<string, string[]>();

  get(uid: string): TrackedPod | undefined {
    return this.byUid.get(uid);
  }

  getOrCreate(uid: string, namespace: string, name: string, nodeName: string): TrackedPod {
    let t = this.byUid.get(uid);
    if (!t) {
      t = { uid, namespace, name, nodeName, volumes: new Set() };
      this.byUid.set(uid, t);
    }
    return t;
  }

  delete(uid: string): void {
    this.byUid.delete(uid);
  }

  values(): IterableIterator<TrackedPod> {
    return this.byUid.values();
  }

  get size(): number {
    return this.byUid.size;
  }

  /** Replaces the claims a pod (by `namespace/name`) names. */
  setClaims(podKey: string, namespace: string, claimNames: readonly string[]): void {
    this.clearClaims(podKey);
    if (claimNames.length === 0) return;
    const keys = claimNames.map((c) => `${namespace}/${c}`);
    this.claimsOfPod.set(podKey, keys);
    for (const k of keys) {
      let set = this.claims.get(k);
      if (!set) this.claims.set(k, (set = new Set()));
      set.add(podKey);
    }
  }

  clearClaims(podKey: string): void {
    const keys = this.claimsOfPod.get(podKey);
    if (!keys) return;
    this.claimsOfPod.delete(podKey);
    for (const k of keys) {
      const set = this.claims.get(k);
      set?.delete(podKey);
      if (set?.size === 0) this.claims.delete(k);
    }
  }

  /** Pod keys naming the claim `namespace/name`. */
  podsOfClaim(claimKey: string): readonly string[] {
    const set = this.claims.get(claimKey);
    return set ? [...set] : [];
  }
}
