/**
 * AttachStartLatency: the controller's own share of a new pod's wait for its VolumeAttachment,
 * told apart from the API server's and the simulator's: from the pod event that adds a (volume,
 * node) pair to the desired state to the start of that pair's attach operation. It hears both
 * ends as a {@link ControllerObserver} and observes the difference into a histogram.
 *
 * Pairs waiting are held in a Map keyed by volume and node, at most `maxPending` of them: a cold
 * start adds every pair of the fleet before the first attach starts, and those waits (the initial
 * sync, not a new pod's) are what the cap leaves out once it is full. A pair removed before its
 * attach starts, found attached, or held back by a multi-attach conflict (it waits for a detach
 * elsewhere, G3) is dropped without an observation.
 */
import type { ControllerEvent, ControllerObserver } from '../operations/controller-observer.js';

export interface AttachStartLatency extends ControllerObserver {
  /** Pairs added and not yet started, removed or dropped. */
  readonly pending: number;
}

export interface AttachStartLatencyDeps {
  /** Seconds, monotonic. */
  now(): number;
  histogram: { observe(seconds: number): void };
  /** Pairs followed at once (default 10,000). */
  maxPending?: number;
}

export function createAttachStartLatency(deps: AttachStartLatencyDeps): AttachStartLatency {
  return new AttachStartLatencyImpl(deps);
}

const DEFAULT_MAX_PENDING = 10_000;

class AttachStartLatencyImpl implements AttachStartLatency {
  private readonly since = new Map<string, number>();
  private readonly max: number;

  constructor(private readonly d: AttachStartLatencyDeps) {
    this.max = Math.max(0, d.maxPending ?? DEFAULT_MAX_PENDING);
  }

  get pending(): number {
    return this.since.size;
  }

  observe(e: ControllerEvent): void {
    switch (e.kind) {
      case 'desired-added': {
        const key = pairKey(e.volume, e.node);
        if (this.since.size < this.max && !this.since.has(key)) this.since.set(key, this.d.now());
        return;
      }
      case 'attach-started': {
        const key = pairKey(e.volume, e.node);
        const t = this.since.get(key);
        if (t === undefined) return;
        this.since.delete(key);
        this.d.histogram.observe(Math.max(0, this.d.now() - t));
        return;
      }
      case 'desired-removed':
      case 'attach-succeeded':
      case 'multi-attach-blocked':
        // No longer wanted; attached without an attach of ours (found attached, another pod's); or
        // held back until the volume leaves another node, a wait for that detach, not for us.
        this.since.delete(pairKey(e.volume, e.node));
        return;
      default:
    }
  }
}

/** Unique volume names hold no newline; node names cannot. */
function pairKey(volume: string, node: string): string {
  return `${volume}\n${node}`;
}
