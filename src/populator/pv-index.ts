/** Unique volume names resolved from each PV name (normally one), for PV events (C8) and lookups by PV. */
export class PvIndex {
  private readonly byPv = new Map<string, string[]>();

  add(pvName: string, unique: string): void {
    const list = this.byPv.get(pvName);
    if (!list) this.byPv.set(pvName, [unique]);
    else if (!list.includes(unique)) list.push(unique);
  }

  volumesFor(pvName: string): readonly string[] {
    return this.byPv.get(pvName) ?? [];
  }
}
