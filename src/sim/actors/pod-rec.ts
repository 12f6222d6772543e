import type { FleetIndex } from './fleet-index.js';

/**
 * A pod as the actors see it: a view of its id in the index, read through to the index's
 * current state. Valid while the pod is indexed (a removed pod's id may be reused): keep the
 * key, not the view.
 */
export class PodRec {
  constructor(
    private readonly index: FleetIndex,
    readonly id: number,
  ) {}

  /** `namespace/name`. */
  get key(): string {
    return this.index.podKey(this.id);
  }

  get namespace(): string {
    const key = this.key;
    return key.slice(0, key.indexOf('/'));
  }

  get name(): string {
    const key = this.key;
    return key.slice(key.indexOf('/') + 1);
  }

  /** Node id, or -1 when unscheduled. */
  get node(): number {
    return this.index.podNode(this.id);
  }

  /** deletionTimestamp is set. */
  get deleting(): boolean {
    return this.index.podDeleting(this.id);
  }

  /** Phase Succeeded or Failed. */
  get terminal(): boolean {
    return this.index.podTerminal(this.id);
  }

  /** The claims' keys (`namespace/claim`). */
  get claimKeys(): string[] {
    return Array.from(this.index.podClaimIds(this.id), (c) => this.index.claimKey(c));
  }

  /** The claims' names. */
  get claims(): string[] {
    return this.claimKeys.map((k) => k.slice(k.indexOf('/') + 1));
  }
}
