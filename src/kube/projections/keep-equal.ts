/**
 * ResourceKind.keepFrom for plain projections (records of strings, numbers and booleans, and
 * records and arrays of those): `old` itself when the two are equal throughout, else `fresh`
 * with every top-level value equal to `old`'s taken from `old` (the same strings, lists and
 * records). Generic on purpose: a field added to a projection takes part without being listed.
 */
export function keepEqual<T extends object>(old: T, fresh: T): T {
  if (same(old, fresh)) return old;
  const o = old as Record<string, unknown>;
  const f = fresh as Record<string, unknown>;
  // `fresh` is the update's own projection, not yet seen by anyone: completed in place.
  for (const k in f) if (Object.hasOwn(o, k) && same(o[k], f[k])) f[k] = o[k];
  return fresh;
}

/**
 * Deep equality of projections (plain records, arrays, scalars). Not `util.isDeepStrictEqual`,
 * which also walks prototypes and symbols: on a PV and a VolumeAttachment update it took ~2.9 µs
 * against ~1.3 µs here (a side-by-side loop), on a path taken ~1.5M times in a 50k
 * cold start.
 */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!same(a[i], b[i])) return false;
    return true;
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let keys = 0;
  for (const k in ra) {
    if (!Object.hasOwn(rb, k) || !same(ra[k], rb[k])) return false;
    keys++;
  }
  for (const _ in rb) keys--;
  return keys === 0;
}
