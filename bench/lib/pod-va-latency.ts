/**
 * New-pod-to-VolumeAttachment latency from a stream of pod, PersistentVolume and
 * VolumeAttachment changes, whatever delivers them: the bench's own watches
 * (pod-va-tracker.ts) or the simulator's commits (pod-va-commit-tracker.ts). Each new pod's
 * volumes are matched to the VolumeAttachment the controller must create for them, by its name
 * `csi-<sha256(volumeHandle + driver + nodeName)>` (L2); latency runs from the pod's change to
 * the VolumeAttachment's first change, and on to its `status.attached`, on the caller's clock.
 *
 * "New" pods are pods whose claims are new: their PV appeared after the stream began and no
 * earlier pod used them (churn creations). Pods reusing a claim (churn reschedules) first wait
 * for the detach from their old node (multi-attach protection), so they are counted apart, not
 * timed. A new pod deleted before its VolumeAttachment was seen (the churn deletes random pods, a
 * few of them within their first tens of ms) is dropped: no attachment is owed to it, and
 * counting it as still waiting put minute-long waits into the window's worst seconds.
 */
import { createHash } from 'node:crypto';
import { latencyTimeline, tailShare, type LatencySample, type TailShare, type TimelineBucket } from './latency-timeline.js';
import { censoredPercentile } from './stats.js';

export interface PodVaResult {
  /** New pods first seen inside the window. */
  newPods: number;
  /** Of those, volumes whose VolumeAttachment was seen (and latencies, ms). */
  volumes: number;
  matched: number;
  /**
   * Percentiles over every volume of the window's new pods; one still without its
   * VolumeAttachment counts with the time it has waited so far, and a percentile that depends
   * on such a wait is a lower bound (`atLeast`).
   */
  podToVaMs: { p50?: number; p99?: number; max?: number; p50AtLeast: boolean; p99AtLeast: boolean };
  podToAttachedMs: { p50?: number; p99?: number; p50AtLeast: boolean; p99AtLeast: boolean };
  /** Pod-to-VolumeAttachment latency per second of the window, by when the pod was seen. */
  timeline: TimelineBucket[];
  /** How much of the latency above the target lies in the three worst seconds. */
  tail: TailShare;
  /** Pods in the window whose claims predate the stream (reschedules). */
  otherPods: number;
  /** New pods of the window deleted before their VolumeAttachment was seen (not timed). */
  deletedBeforeVa: number;
  podEvents: number;
  vaEvents: number;
}

/** What the latency reads of a pod. */
export interface PodFacts {
  uid: string;
  namespace: string;
  node: string | undefined;
  /** Its claims' names. */
  claims: string[];
}

export interface PvSource {
  driver: string;
  handle: string;
}

interface PodSeen { t: number; inWindow: boolean }

interface PodShape {
  metadata: { namespace: string; uid: string };
  spec?: { nodeName?: string; volumes?: Array<{ persistentVolumeClaim?: { claimName: string } }> };
}

/** A pod object's facts (as listed, watched or committed). */
export function podFacts(pod: PodShape): PodFacts {
  const claims: string[] = [];
  for (const v of pod.spec?.volumes ?? []) if (v.persistentVolumeClaim) claims.push(v.persistentVolumeClaim.claimName);
  return { uid: pod.metadata.uid, namespace: pod.metadata.namespace, node: pod.spec?.nodeName, claims };
}

/** A PV object's claim (`namespace/name`) and CSI source, when it has both. */
export function pvFacts(pv: { spec?: { claimRef?: { namespace: string; name: string }; csi?: { driver: string; volumeHandle: string } } }): { claim: string; source: PvSource } | undefined {
  const ref = pv.spec?.claimRef;
  const csi = pv.spec?.csi;
  return ref && csi ? { claim: `${ref.namespace}/${ref.name}`, source: { driver: csi.driver, handle: csi.volumeHandle } } : undefined;
}

export class PodVaLatency {
  private readonly pvByClaim = new Map<string, PvSource>();
  /** Claims of pods waiting for their PV: claim key → pods (node, sighting). */
  private readonly waitingClaims = new Map<string, Array<{ node: string; seen: PodSeen; key: string }>>();
  /** VA name → the sighting of the pod it was created for. */
  private readonly expected = new Map<string, PodSeen>();
  private readonly vaSeenAt = new Map<string, number>();
  private readonly attachedAt = new Map<string, number>();
  private readonly resolvedPods = new Set<string>();
  /** Pod uid → the VolumeAttachment names expected for it. */
  private readonly vasOfPod = new Map<string, string[]>();
  private deletedBeforeVa = 0;
  private readonly windowPods = new Set<string>();
  private readonly claimsUsed = new Set<string>();
  private inWindow = false;
  private windowStart = 0;
  podEvents = 0;
  vaEvents = 0;

  beginWindow(now: number): void {
    this.inWindow = true;
    this.windowStart = now;
  }

  endWindow(): void {
    this.inWindow = false;
  }

  /** Whether the VolumeAttachment `name` is one a timed pod waits for, and not yet attached. */
  awaitsAttach(name: string): boolean {
    return this.expected.has(name) && !this.attachedAt.has(name);
  }

  podAdded(pod: PodFacts, now: number): void {
    if (!pod.node) return;
    const seen: PodSeen = { t: now, inWindow: this.inWindow };
    const key = pod.uid;
    if (seen.inWindow) this.windowPods.add(key);
    const claims = pod.claims.map((c) => `${pod.namespace}/${c}`);
    // A claim used by an earlier pod: a reschedule, which waits for the old node's detach.
    const reused = claims.some((c) => this.claimsUsed.has(c));
    for (const c of claims) this.claimsUsed.add(c);
    if (reused) return;
    for (const claim of claims) {
      const pv = this.pvByClaim.get(claim);
      if (pv) this.expect(key, pv, pod.node, seen);
      else this.waitingClaims.set(claim, [...(this.waitingClaims.get(claim) ?? []), { node: pod.node, seen, key }]);
    }
  }

  podDeleted(pod: PodFacts): void {
    const { uid } = pod;
    let dropped = false;
    // Still waiting for its PV: it will never be owed a VolumeAttachment.
    for (const name of pod.claims) {
      const claim = `${pod.namespace}/${name}`;
      const waiting = this.waitingClaims.get(claim);
      if (!waiting) continue;
      const rest = waiting.filter((w) => w.key !== uid);
      if (rest.length === waiting.length) continue;
      dropped ||= waiting.some((w) => w.key === uid && w.seen.inWindow);
      if (rest.length === 0) this.waitingClaims.delete(claim);
      else this.waitingClaims.set(claim, rest);
    }
    const names = this.vasOfPod.get(uid) ?? [];
    this.vasOfPod.delete(uid);
    for (const name of names) {
      if (this.vaSeenAt.has(name)) continue;
      dropped ||= this.expected.get(name)?.inWindow === true;
      this.expected.delete(name);
    }
    if (dropped) {
      this.deletedBeforeVa++;
      this.windowPods.delete(uid);
    }
  }

  pvAdded(claim: string, source: PvSource): void {
    this.pvByClaim.set(claim, source);
    const waiting = this.waitingClaims.get(claim);
    if (!waiting) return;
    this.waitingClaims.delete(claim);
    for (const w of waiting) this.expect(w.key, source, w.node, w.seen);
  }

  /** A VolumeAttachment added or modified. */
  vaChanged(name: string, attached: boolean, now: number): void {
    if (!this.vaSeenAt.has(name)) this.vaSeenAt.set(name, now);
    if (attached && !this.attachedAt.has(name)) this.attachedAt.set(name, now);
  }

  private expect(podKey: string, pv: PvSource, node: string, seen: PodSeen): void {
    this.resolvedPods.add(podKey);
    const name = `csi-${createHash('sha256').update(pv.handle + pv.driver + node).digest('hex')}`;
    this.expected.set(name, seen);
    const names = this.vasOfPod.get(podKey);
    if (names) names.push(name);
    else this.vasOfPod.set(podKey, [name]);
  }

  /** `tailOverMs`: the latency above which a sample counts as tail (the target). */
  result(now: number, tailOverMs = 200): PodVaResult {
    const toVa: number[] = [];
    const vaWaiting: number[] = [];
    const toAttached: number[] = [];
    const attachWaiting: number[] = [];
    const samples: LatencySample[] = [];
    let volumes = 0;
    for (const [name, seen] of this.expected) {
      if (!seen.inWindow) continue;
      volumes++;
      const va = this.vaSeenAt.get(name);
      if (va !== undefined) toVa.push(Math.max(0, va - seen.t));
      else vaWaiting.push(now - seen.t);
      samples.push({ t: seen.t, ms: Math.max(0, (va ?? now) - seen.t) });
      const at = this.attachedAt.get(name);
      if (at !== undefined) toAttached.push(Math.max(0, at - seen.t));
      else attachWaiting.push(now - seen.t);
    }
    const va50 = censoredPercentile(toVa, vaWaiting, 0.5);
    const va99 = censoredPercentile(toVa, vaWaiting, 0.99);
    const at50 = censoredPercentile(toAttached, attachWaiting, 0.5);
    const at99 = censoredPercentile(toAttached, attachWaiting, 0.99);
    let newPods = 0;
    for (const key of this.windowPods) if (this.resolvedPods.has(key)) newPods++;
    return {
      newPods,
      volumes,
      matched: toVa.length,
      podToVaMs: { p50: va50.value, p99: va99.value, max: toVa.length ? Math.max(...toVa) : undefined, p50AtLeast: va50.atLeast, p99AtLeast: va99.atLeast },
      podToAttachedMs: { p50: at50.value, p99: at99.value, p50AtLeast: at50.atLeast, p99AtLeast: at99.atLeast },
      timeline: latencyTimeline(samples, this.windowStart),
      tail: tailShare(samples, this.windowStart, tailOverMs),
      otherPods: this.windowPods.size - newPods,
      deletedBeforeVa: this.deletedBeforeVa,
      podEvents: this.podEvents,
      vaEvents: this.vaEvents,
    };
  }
}
