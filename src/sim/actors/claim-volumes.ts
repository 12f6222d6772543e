/**
 * The fleet index's claims and volumes, packed: claim keys (`namespace/claim`) and unique
 * volume names interned as ids (StringTable, bytes outside the JavaScript heap), and per claim
 * id in typed arrays its PV's volume and multi-attach ban, whether a PV names it now, and how
 * many pods name it. Claims resolve through the PV's claimRef alone (PVC events are not
 * followed): no PVC parse.
 *
 * A claim keeps the last volume a PV gave it after that PV is gone (pods that resolved it keep
 * it in use, as a kubelet keeps a volume mounted); a claim no PV and no pod names is released.
 * Volume ids are never released.
 */
import { grownInt32 } from '../../packed/byte-arena.js';
import { StringTable } from '../../packed/string-table.js';

// A claim's PV packed into one small integer: the interned unique volume name (-1 for a volume
// that is not CSI) and whether multi-attach is forbidden (every access mode
// ReadWriteOnce(-Pod)). UNRESOLVED: no PV has named the claim since it was interned.
const packPv = (vid: number, rwo: boolean): number => (vid + 1) * 2 + (rwo ? 1 : 0);
const UNRESOLVED = -1;

export class ClaimVolumes {
  private readonly claimIds = new StringTable();
  private claimPv = new Int32Array(64);
  private claimBound = new Uint8Array(64);
  private claimRefs = new Int32Array(64);
  private bound = 0;
  private generation = 0;
  private readonly volumes = new StringTable();

  /** Claims a PV names now. */
  get boundCount(): number {
    return this.bound;
  }

  /** Bumped when a claim's volume changes to another (not when one is bound or its PV deleted). */
  get volumeGeneration(): number {
    return this.generation;
  }

  /** A PV naming claim `key` was added or changed: its volume (`volume`: a unique volume name, or undefined when not CSI). */
  bind(key: string, volume: string | undefined, rwo: boolean): void {
    const next = packPv(volume === undefined ? -1 : this.intern(volume), rwo);
    const c = this.claimId(key);
    const prev = this.claimPv[c];
    if (prev !== UNRESOLVED && prev !== next) this.generation++;
    if (this.claimBound[c] === 0) this.bound++;
    this.claimBound[c] = 1;
    this.claimPv[c] = next;
  }

  /** The PV naming claim `key` was deleted. */
  unbind(key: string): void {
    const c = this.claimIds.find(key);
    if (c < 0 || this.claimBound[c] === 0) return;
    this.claimBound[c] = 0;
    this.bound--;
    this.releaseIfUnused(c);
  }

  /** The id of claim `key`, interned if new. */
  claimId(key: string): number {
    const found = this.claimIds.find(key);
    if (found >= 0) return found;
    const c = this.claimIds.intern(key);
    if (c >= this.claimPv.length) {
      const n = Math.max(c + 1, this.claimPv.length * 2);
      this.claimPv = grownInt32(this.claimPv, n);
      this.claimRefs = grownInt32(this.claimRefs, n);
      const b = new Uint8Array(n);
      b.set(this.claimBound);
      this.claimBound = b;
    }
    this.claimPv[c] = UNRESOLVED;
    this.claimBound[c] = 0;
    this.claimRefs[c] = 0;
    return c;
  }

  /** True when claim id `c` is the claim `key`. */
  is(c: number, key: string): boolean {
    return this.claimIds.equals(c, key);
  }

  /** A pod names claim `c`. */
  ref(c: number): void {
    this.claimRefs[c]++;
  }

  /** A pod no longer names claim `c`. */
  unref(c: number): void {
    this.claimRefs[c]--;
    this.releaseIfUnused(c);
  }

  claimKey(c: number): string {
    return this.claimIds.text(c);
  }

  /** Whether a PV names claim `c` now. */
  isBound(c: number): boolean {
    return this.claimBound[c] === 1;
  }

  /** Whether some PV has given claim `c` a volume (now or before it was deleted). */
  isResolved(c: number): boolean {
    return this.claimPv[c] !== UNRESOLVED;
  }

  /** Whether claim `c`'s PV forbids multi-attach (false when unresolved). */
  isRwo(c: number): boolean {
    const v = this.claimPv[c];
    return v !== UNRESOLVED && v % 2 === 1;
  }

  /** The volume id of claim `c`'s PV, -1 when it is not CSI (the claim must be resolved). */
  volumeOf(c: number): number {
    return Math.floor(this.claimPv[c] / 2) - 1;
  }

  /** Interned id of a unique volume name. */
  intern(volume: string): number {
    return this.volumes.intern(volume);
  }

  volumeName(vid: number): string {
    return this.volumes.text(vid);
  }

  /** True when volume id `vid` is `name`. */
  isVolume(vid: number, name: string): boolean {
    return this.volumes.equals(vid, name);
  }

  private releaseIfUnused(c: number): void {
    if (this.claimRefs[c] === 0 && this.claimBound[c] === 0) this.claimIds.release(c);
  }
}
