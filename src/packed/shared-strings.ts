/**
 * SharedStrings: an interner from a string to a small integer id and back, for the values that
 * many packed records repeat (namespaces, node names, phases, driver names, source types). A
 * record holds the id; the table holds one JavaScript string per distinct value, so its size
 * follows the number of distinct values, not the number of records.
 *
 * Ids are never reused or forgotten: a record may hold an id for as long as it lives, and a
 * table that dropped entries could not tell which are still held. Only values whose count does
 * not grow with the fleet belong here; unique values (names, UIDs, handles) go into the records
 * as bytes.
 */
import { flatCopy } from '../cache/flat-copy.js';

export class SharedStrings {
  private readonly ids = new Map<string, number>();
  private readonly strings: string[] = [];

  /** The id of `s`, assigned on first sight. */
  id(s: string): number {
    const hit = this.ids.get(s);
    if (hit !== undefined) return hit;
    const id = this.strings.length;
    // A value read from a large text may be a slice of it, which would keep the text alive: the
    // table keeps a copy of its own (once per distinct value).
    const own = s.length < 13 ? flatCopy(s) : Buffer.from(s, 'utf8').toString('utf8');
    this.strings.push(own);
    this.ids.set(own, id);
    return id;
  }

  /** The string of an id that {@link id} returned. */
  at(id: number): string {
    const s = this.strings[id];
    if (s === undefined) throw new RangeError(`SharedStrings: unknown id ${id}`);
    return s;
  }

  get size(): number {
    return this.strings.length;
  }
}
