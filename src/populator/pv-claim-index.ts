/**
 * PvClaimIndex: which claims (`namespace/name`) name each PersistentVolume in `spec.volumeName`,
 * kept from PVC events, so that a PV arriving or changing after its claim and pods can re-process
 * exactly the pods waiting for it (the populator's PV handler) instead of leaving them to the
 * full pod pass (C10).
 */
export class PvClaimIndex {
  /** PV name → claim keys naming it. */
  private readonly claims = new Map<string, Set<string>>();
  /** claim key → the PV name it was indexed under. */
  private readonly pvOf = new Map<string, string>();

  /** Records the claim's `spec.volumeName` ('' while unbound: not indexed). */
  set(claimKey: string, volumeName: string): void {
    const prev = this.pvOf.get(claimKey);
    if (prev === volumeName) return;
    if (prev !== undefined) this.delete(claimKey);
    if (volumeName === '') return;
    this.pvOf.set(claimKey, volumeName);
    let set = this.claims.get(volumeName);
    if (!set) this.claims.set(volumeName, (set = new Set()));
    set.add(claimKey);
  }

  delete(claimKey: string): void {
    const pv = this.pvOf.get(claimKey);
    if (pv === undefined) return;
    this.pvOf.delete(claimKey);
    const set = this.claims.get(pv);
    set?.delete(claimKey);
    if (set?.size === 0) this.claims.delete(pv);
  }

  /** Claim keys whose `spec.volumeName` is `pvName`. */
  claimsOfPv(pvName: string): readonly string[] {
    const set = this.claims.get(pvName);
    return set ? [...set] : [];
  }

  get size(): number {
    return this.pvOf.size;
  }
}
