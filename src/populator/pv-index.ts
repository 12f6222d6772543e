/**
 * Unique volume names resolved from each PV name (normally one), for PV events (C8) and lookups
 * by PV. A lone name is stored as the string itself (one PV, one volume: no array per PV).
 */
export class PvIndex {
  private readonly byPv = new Map<string, string | string[]>();

  add(pvName: string, unique: string): void {
    const cur = this.byPv.get(pvName);
    if (cur === undefined) this.byPv.set(pvName, unique);
    else if (typeof cur === 'string') {
      if (cur !== unique) this.byPv.set(pvName, [cur, unique]);
    } else if (!cur.includes(unique)) cur.push(unique);
  }

  volumesFor(pvName: string): readonly string[] {
    const cur = this.byPv.get(pvName);
    return cur === undefined ? [] : typeof cur === 'string' ? [cur] : cur;
  }
}
