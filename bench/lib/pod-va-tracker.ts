/**
 * New-pod-to-VolumeAttachment latency, seen from outside the controller: the bench watches
 * pods, PersistentVolumes and VolumeAttachments on the API server and matches each new pod's
 * volumes to the VolumeAttachment the controller must create for them, by its name
 * `csi-<sha256(volumeHandle + driver + nodeName)>` (L2). Latency runs from the pod's first
 * sighting to the VolumeAttachment's first sighting (both on this process's clock and through
 * the same server), and on to its `status.attached`.
 *
 * "New" pods are pods whose claims are new: their PV appeared during the watch and no earlier
 * pod used them (churn creations). Pods reusing a claim (churn reschedules) first wait for the
 * detach from their old node (multi-attach protection), so they are counted apart, not timed.
 * A new pod deleted before its VolumeAttachment was seen (the churn deletes random pods, a few
 * of them within their first tens of ms) is dropped: no attachment is owed to it, and counting
 * it as still waiting put minute-long waits into the window's worst seconds.
 *
 * The raw pod watch lines are kept (up to a cap) for the JSON.parse baseline.
 */
import { createHash } from 'node:crypto';
import type { RawKube, RawWatch } from './raw-kube.js';
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
  /** Pods in the window whose claims predate the watch (reschedules). */
  otherPods: number;
  /** New pods of the window deleted before their VolumeAttachment was seen (not timed). */
  deletedBeforeVa: number;
  podEvents: number;
  vaEvents: number;
}

interface PodSeen { t: number; inWindow: boolean }

const ADDED = '{"type":"ADDED"';
const DELETED = '{"type":"DELETED"';
const MODIFIED = '{"type":"MODIFIED"';

export class PodVaTracker {
  private readonly watches: RawWatch[] = [];
  private readonly pvByClaim = new Map<string, { driver: string; handle: string }>();
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
  readonly podLines: string[] = [];
  private podLineBytes = 0;
  private podEvents = 0;
  private vaEvents = 0;

  constructor(private readonly kube: RawKube, private readonly maxPodLineBytes = 256 * 2 ** 20) {}

  /** Opens the three watches from the current resourceVersion; resolves once all three are established. */
  async start(): Promise<void> {
    const rvOf = async (path: string) => (await this.kube.getJson<{ metadata: { resourceVersion: string } }>(`${path}?limit=1`)).metadata.resourceVersion;
    const open = async (path: string, onLine: (l: string) => void) => {
      const w = this.kube.watch(path, await rvOf(path), onLine);
      this.watches.push(w);
      await w.started;
    };
    await open('/api/v1/persistentvolumes', (l) => this.onPv(l));
    await open('/apis/storage.k8s.io/v1/volumeattachments', (l) => this.onVa(l));
    await open('/api/v1/pods', (l) => this.onPod(l));
  }

  beginWindow(): void {
    this.inWindow = true;
    this.windowStart = performance.now();
  }

  endWindow(): void {
    this.inWindow = false;
  }

  stop(): void {
    for (const w of this.watches) w.close();
  }

  private onPod(line: string): void {
    this.podEvents++;
    if (this.podLineBytes < this.maxPodLineBytes) {
      this.podLines.push(line);
      this.podLineBytes += line.length;
    }
    if (line.startsWith(DELETED)) {
      const gone = (JSON.parse(line) as { object: { metadata: { namespace: string; uid: string }; spec?: { volumes?: Array<{ persistentVolumeClaim?: { claimName: string } }> } } }).object;
      const claims = (gone.spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [`${gone.metadata.namespace}/${v.persistentVolumeClaim.claimName}`] : []));
      this.onPodDeleted(gone.metadata.uid, claims);
      return;
    }
    if (!line.startsWith(ADDED)) return;
    const pod = (JSON.parse(line) as { object: { metadata: { namespace: string; name: string; uid: string }; spec?: { nodeName?: string; volumes?: Array<{ persistentVolumeClaim?: { claimName: string } }> } } }).object;
    const node = pod.spec?.nodeName;
    if (!node) return;
    const seen: PodSeen = { t: performance.now(), inWindow: this.inWindow };
    const key = pod.metadata.uid;
    if (seen.inWindow) this.windowPods.add(key);
    const claims = (pod.spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [`${pod.metadata.namespace}/${v.persistentVolumeClaim.claimName}`] : []));
    // A claim used by an earlier pod: a reschedule, which waits for the old node's detach.
    const reused = claims.some((c) => this.claimsUsed.has(c));
    for (const c of claims) this.claimsUsed.add(c);
    if (reused) return;
    for (const claim of claims) {
      const pv = this.pvByClaim.get(claim);
      if (pv) this.expect(key, pv, node, seen);
      else this.waitingClaims.set(claim, [...(this.waitingClaims.get(claim) ?? []), { node, seen, key }]);
    }
  }

  private onPodDeleted(uid: string, claims: readonly string[]): void {
    let dropped = false;
    // Still waiting for its PV: it will never be owed a VolumeAttachment.
    for (const claim of claims) {
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

  private onPv(line: string): void {
    if (!line.startsWith(ADDED)) return;
    const pv = (JSON.parse(line) as { object: { spec?: { claimRef?: { namespace: string; name: string }; csi?: { driver: string; volumeHandle: string } } } }).object;
    const ref = pv.spec?.claimRef;
    const csi = pv.spec?.csi;
    if (!ref || !csi) return;
    const claim = `${ref.namespace}/${ref.name}`;
    const source = { driver: csi.driver, handle: csi.volumeHandle };
    this.pvByClaim.set(claim, source);
    const waiting = this.waitingClaims.get(claim);
    if (!waiting) return;
    this.waitingClaims.delete(claim);
    for (const w of waiting) this.expect(w.key, source, w.node, w.seen);
  }

  private onVa(line: string): void {
    this.vaEvents++;
    const added = line.startsWith(ADDED);
    if (!added && !line.startsWith(MODIFIED)) return;
    const now = performance.now();
    const va = (JSON.parse(line) as { object: { metadata: { name: string }; status?: { attached?: boolean } } }).object;
    const name = va.metadata.name;
    if (!this.vaSeenAt.has(name)) this.vaSeenAt.set(name, now);
    if (va.status?.attached === true && !this.attachedAt.has(name)) this.attachedAt.set(name, now);
  }

  private expect(podKey: string, pv: { driver: string; handle: string }, node: string, seen: PodSeen): void {
    this.resolvedPods.add(podKey);
    const name = `csi-${createHash('sha256').update(pv.handle + pv.driver + node).digest('hex')}`;
    this.expected.set(name, seen);
    const names = this.vasOfPod.get(podKey);
    if (names) names.push(name);
    else this.vasOfPod.set(podKey, [name]);
  }

  /** `tailOverMs`: the latency above which a sample counts as tail (the target). */
  result(tailOverMs = 200): PodVaResult {
    const now = performance.now();
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
