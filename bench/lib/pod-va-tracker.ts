/**
 * New-pod-to-VolumeAttachment latency seen through the bench's own watches on the API server:
 * pods, PersistentVolumes and VolumeAttachments, each change timed when its watch line arrives
 * (on this process's clock, through the same server as the controller). The matching is
 * PodVaLatency's. `--pod-va-source watch` selects it; the default times the simulator's
 * commits instead (pod-va-commit-tracker.ts), which costs the machine under test less.
 *
 * The raw pod watch lines are kept (up to a cap) for the JSON.parse baseline.
 */
import type { RawKube, RawWatch } from './raw-kube.js';
import { PodVaLatency, podFacts, pvFacts, type PodVaResult } from './pod-va-latency.js';

export type { PodVaResult } from './pod-va-latency.js';

/** Where new-pod-to-VolumeAttachment latency is taken: the contract the e2e steady phase drives. */
export interface PodVaSource {
  /** `watch` (the bench's watches) or `commit` (the simulator's commits). */
  readonly kind: 'watch' | 'commit';
  /** Starts following changes; resolves once nothing from now on can be missed. */
  start(): Promise<void>;
  /** Resolves once the window has begun where the changes are timed. */
  beginWindow(): Promise<void>;
  endWindow(): Promise<void>;
  result(): Promise<PodVaResult>;
  /** The pod changes seen (up to a cap) as watch lines: the JSON.parse baseline's input. */
  podLines(): Promise<string[]>;
  stop(): void;
}

const ADDED = '{"type":"ADDED"';
const DELETED = '{"type":"DELETED"';
const MODIFIED = '{"type":"MODIFIED"';

export class PodVaTracker implements PodVaSource {
  readonly kind = 'watch';
  private readonly watches: RawWatch[] = [];
  private readonly latency = new PodVaLatency();
  private readonly lines: string[] = [];
  private lineBytes = 0;

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

  async beginWindow(): Promise<void> {
    this.latency.beginWindow(performance.now());
  }

  async endWindow(): Promise<void> {
    this.latency.endWindow();
  }

  async result(): Promise<PodVaResult> {
    return this.latency.result(performance.now());
  }

  async podLines(): Promise<string[]> {
    return this.lines;
  }

  stop(): void {
    for (const w of this.watches) w.close();
  }

  private onPod(line: string): void {
    this.latency.podEvents++;
    if (this.lineBytes < this.maxPodLineBytes) {
      this.lines.push(line);
      this.lineBytes += line.length;
    }
    const deleted = line.startsWith(DELETED);
    if (!deleted && !line.startsWith(ADDED)) return;
    const pod = podFacts((JSON.parse(line) as { object: Parameters<typeof podFacts>[0] }).object);
    if (deleted) this.latency.podDeleted(pod);
    else this.latency.podAdded(pod, performance.now());
  }

  private onPv(line: string): void {
    if (!line.startsWith(ADDED)) return;
    const pv = pvFacts((JSON.parse(line) as { object: Parameters<typeof pvFacts>[0] }).object);
    if (pv) this.latency.pvAdded(pv.claim, pv.source);
  }

  private onVa(line: string): void {
    this.latency.vaEvents++;
    if (!line.startsWith(ADDED) && !line.startsWith(MODIFIED)) return;
    const now = performance.now();
    const va = (JSON.parse(line) as { object: { metadata: { name: string }; status?: { attached?: boolean } } }).object;
    this.latency.vaChanged(va.metadata.name, va.status?.attached === true, now);
  }
}
