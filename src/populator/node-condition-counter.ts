/**
 * NodeConditionCounter: O(1) counts of healthy managed nodes and out-of-service nodes for the
 * inspection API's summary, kept up to date by whoever applies Node events (the start-up loader
 * and the populator). Managed is sticky, as in the state (B2).
 */
export class NodeConditionCounter {
  private readonly nodes = new Map<string, number>();
  private healthyManaged = 0;
  private outOfService = 0;

  private static readonly MANAGED = 1;
  private static readonly HEALTHY = 2;
  private static readonly OOS = 4;

  /** Records the node's current flags. */
  set(name: string, managed: boolean, healthy: boolean, oos: boolean): void {
    const prev = this.nodes.get(name) ?? 0;
    const m = managed || (prev & NodeConditionCounter.MANAGED) !== 0;
    const next = (m ? NodeConditionCounter.MANAGED : 0) | (healthy ? NodeConditionCounter.HEALTHY : 0) | (oos ? NodeConditionCounter.OOS : 0);
    this.apply(prev, -1);
    this.apply(next, 1);
    this.nodes.set(name, next);
  }

  /** The Node object is gone: it counts as neither healthy nor tainted. */
  delete(name: string): void {
    const prev = this.nodes.get(name);
    if (prev === undefined) return;
    this.apply(prev, -1);
    this.nodes.delete(name);
  }

  counts(): { healthy: number; outOfService: number } {
    return { healthy: this.healthyManaged, outOfService: this.outOfService };
  }

  private apply(flags: number, sign: 1 | -1): void {
    const healthyManaged = NodeConditionCounter.MANAGED | NodeConditionCounter.HEALTHY;
    if ((flags & healthyManaged) === healthyManaged) this.healthyManaged += sign;
    if (flags & NodeConditionCounter.OOS) this.outOfService += sign;
  }
}
