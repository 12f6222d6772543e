/**
 * A keep spec names the members of a JSON object that a reader needs: `true` keeps a member's
 * value whole, a nested spec keeps only the members it names of an object value, and a spec in
 * a one-element array keeps those members of each object in an array value. A value of another
 * shape than the spec expects is kept whole, so a reader sees the same wrong type (and gives the
 * same error) as it would in the full object.
 */
import { fleetError } from '../../errors/index.js';
import { E_CHILD, E_KEY, E_KEY_LEN, E_MODE, MODE_EACH, MODE_OBJECT, MODE_WHOLE, SPEC_BASE, SPEC_BYTES, SPEC_ENTRY_BYTES } from './sieve-abi.js';

export type KeepSpec = { readonly [key: string]: true | KeepSpec | readonly [KeepSpec] };

const listSpecs = new WeakMap<KeepSpec, KeepSpec>();

/**
 * A list response: its metadata (resourceVersion, continue) whole, and `item` of each item. The
 * same object for the same `item`, so a sieve writes it into its memory once.
 */
export function listKeepSpec(item: KeepSpec): KeepSpec {
  let spec = listSpecs.get(item);
  if (spec === undefined) {
    spec = { metadata: true, items: [item] };
    listSpecs.set(item, spec);
  }
  return spec;
}

class SpecAreaFull extends Error {}

/**
 * Writes specs into the spec area of a sieve's memory, each once, and tells where each begins.
 * Keys (printable ASCII) are stored as their bytes; the sieve compares them to keys written
 * without escapes, byte for byte.
 */
export class SpecTable {
  private readonly roots = new Map<KeepSpec, number>();
  private used = SPEC_BASE;

  constructor(private readonly memory: () => DataView) {}

  /**
   * The address of `spec`'s root node, writing it first if it is new here. When the area is full
   * every spec is dropped and this one written alone (the controller's few specs never fill it;
   * a caller making specs on the fly would); only a spec larger than the area throws.
   */
  rootOf(spec: KeepSpec): number {
    let root = this.roots.get(spec);
    if (root === undefined) {
      root = this.tryWrite(spec);
      if (root === undefined) {
        this.roots.clear();
        this.used = SPEC_BASE;
        root = this.tryWrite(spec);
        if (root === undefined) throw fleetError('FA_ERR_KERNEL', 'JSON sieve: a keep spec exceeds the spec area');
      }
      this.roots.set(spec, root);
    }
    return root;
  }

  private tryWrite(spec: KeepSpec): number | undefined {
    try {
      return this.write(spec);
    } catch (err) {
      if (err instanceof SpecAreaFull) return undefined;
      throw err;
    }
  }

  private take(bytes: number): number {
    const at = (this.used + 3) & ~3;
    if (at + bytes > SPEC_BASE + SPEC_BYTES) throw new SpecAreaFull();
    this.used = at + bytes;
    return at;
  }

  private write(spec: KeepSpec): number {
    const keys = Object.keys(spec);
    const node = this.take(4 + keys.length * SPEC_ENTRY_BYTES);
    const view = this.memory(); // the memory does not grow while specs are written
    view.setUint32(node, keys.length, true);
    keys.forEach((key, i) => {
      // The sieve compares bytes, JSON.parse decoded text: they agree for ASCII keys (a key in the
      // input that is not valid UTF-8 could decode to a non-ASCII spec key with other bytes).
      if (!/^[\x20-\x7e]*$/.test(key)) throw fleetError('FA_ERR_KERNEL', `JSON sieve: keep spec key ${JSON.stringify(key)} is not printable ASCII`);
      const bytes = Buffer.from(key, 'latin1');
      const at = this.take(bytes.length);
      new Uint8Array(view.buffer, at, bytes.length).set(bytes);
      const rule = spec[key]!;
      const [mode, child] = rule === true ? [MODE_WHOLE, 0] : Array.isArray(rule) ? [MODE_EACH, this.write((rule as readonly [KeepSpec])[0])] : [MODE_OBJECT, this.write(rule as KeepSpec)];
      const e = node + 4 + i * SPEC_ENTRY_BYTES;
      view.setUint32(e + E_KEY, at, true);
      view.setUint32(e + E_KEY_LEN, bytes.length, true);
      view.setUint32(e + E_MODE, mode, true);
      view.setUint32(e + E_CHILD, child, true);
    });
    return node;
  }
}
