/**
 * SkippedVolumes: the pod volumes the populator left out of the desired state at each pod's
 * last processing, counted by reason for `fleet_attach_desired_volumes_skipped` (read on
 * scrape). A level, like the desired state: a pod's entry is replaced whenever the pod is
 * processed and dropped when the pod is removed, so a volume that resolves later (its PV
 * arrived, its claim bound) stops counting.
 *
 * Only pods with at least one skipped volume have an entry.
 */
import { SKIP_REASONS, type SkipReason } from './volume-resolver.js';

const CODE = new Map<SkipReason, number>(SKIP_REASONS.map((r, i) => [r, i]));

export interface SkippedPod {
  /** `namespace/name`, to find the pod again (C9 pass). */
  podKey: string;
  /** Index in SKIP_REASONS of each skipped volume. */
  codes: number[];
}

export class SkippedVolumes {
  private readonly byUid = new Map<string, SkippedPod>();
  private readonly totals = new Array<number>(SKIP_REASONS.length).fill(0);

  /** Sets pod `uid`'s skipped volumes (none: removes its entry). */
  set(uid: string, podKey: string, reasons: readonly SkipReason[] | undefined): void {
    this.delete(uid);
    if (!reasons || reasons.length === 0) return;
    const codes = reasons.map((r) => CODE.get(r)!);
    for (const c of codes) this.totals[c]!++;
    this.byUid.set(uid, { podKey, codes });
  }

  has(uid: string): boolean {
    return this.byUid.size > 0 && this.byUid.has(uid);
  }

  delete(uid: string): void {
    if (this.byUid.size === 0) return;
    const prev = this.byUid.get(uid);
    if (!prev) return;
    for (const c of prev.codes) this.totals[c]!--;
    this.byUid.delete(uid);
  }

  /** Pod UIDs with an entry and their pod keys. */
  entries(): IterableIterator<[string, SkippedPod]> {
    return this.byUid.entries();
  }

  /** Every reason with its count (zeros included). */
  counts(): Array<{ reason: SkipReason; count: number }> {
    return SKIP_REASONS.map((reason, i) => ({ reason, count: this.totals[i]! }));
  }
}
