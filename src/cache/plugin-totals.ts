/**
 * PluginTotals: desired and actual pairs per volume plugin label (O:
 * `attachdetach_controller_total_volumes{plugin_name,state}`), kept as the pairs change so a
 * scrape is O(labels), not a walk of a million volumes. A volume without a label (known only
 * from node status or a VolumeAttachment, no spec yet: A2/A3/A5) is not counted, as upstream's
 * collector skips an entry whose plugin it cannot find by spec.
 */
export interface PluginTotalsRow {
  readonly plugin: string;
  readonly desired: number;
  readonly actual: number;
}

export class PluginTotals {
  /** Label → id; id 0 is "no label". Labels are few (one per CSI driver and in-tree plugin). */
  private readonly ids = new Map<string, number>();
  private readonly names: string[] = [''];
  private readonly desired: number[] = [0];
  private readonly actual: number[] = [0];
  /** Per volume id: its label id (0 or beyond the end = none). */
  private labelOf = new Uint32Array(64);

  /**
   * Sets the volume's label; `pairs` gives the volume's current contribution (its desired and
   * actual pairs), which moves from the old label to the new one.
   */
  setLabel(volume: number, label: string | undefined, pairs: () => { desired: number; actual: number }): void {
    const next = label === undefined ? 0 : this.idOf(label);
    const prev = volume < this.labelOf.length ? this.labelOf[volume] : 0;
    if (next === prev) return;
    if (volume >= this.labelOf.length) {
      const grown = new Uint32Array(Math.max(volume + 1, this.labelOf.length * 2));
      grown.set(this.labelOf);
      this.labelOf = grown;
    }
    const { desired, actual } = pairs();
    this.desired[prev] -= desired;
    this.actual[prev] -= actual;
    this.desired[next] += desired;
    this.actual[next] += actual;
    this.labelOf[volume] = next;
  }

  /** A pair of `volume` became (+1) or stopped being (-1) desired / actual. */
  add(volume: number, desired: number, actual: number): void {
    const id = volume < this.labelOf.length ? this.labelOf[volume] : 0;
    this.desired[id] += desired;
    this.actual[id] += actual;
  }

  /** The volume id is freed (it has no pairs left): its label goes with it. */
  clear(volume: number): void {
    if (volume < this.labelOf.length) this.labelOf[volume] = 0;
  }

  /** Labels with at least one desired or actual pair. */
  rows(): PluginTotalsRow[] {
    const out: PluginTotalsRow[] = [];
    for (let id = 1; id < this.names.length; id++) {
      if (this.desired[id] !== 0 || this.actual[id] !== 0) out.push({ plugin: this.names[id], desired: this.desired[id], actual: this.actual[id] });
    }
    return out;
  }

  private idOf(label: string): number {
    let id = this.ids.get(label);
    if (id === undefined) {
      id = this.names.length;
      this.ids.set(label, id);
      this.names.push(label);
      this.desired.push(0);
      this.actual.push(0);
    }
    return id;
  }
}
