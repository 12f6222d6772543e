/**
 * A resourceVersion as stored: a canonical decimal below 2^31 (the etcd revisions on most
 * clusters) as a number, which V8 keeps unboxed; anything else as the string. Versions are only
 * compared for equality, and both forms compare like the strings they came from.
 *
 * Why it matters beyond the store's size: V8's JSON.parse internalises string values of up to
 * ten characters, and an internalised string lives in the old generation until a full
 * collection clears it from the string table, in a job the pause waits for (271 ms of the first
 * full pause after a 50k cold start). A resourceVersion read as text is such a string, one per
 * object listed or watched. Texts this process writes for itself (a list page's projections,
 * list-page.ts) carry the packed form instead; watch lines are parsed by client-node.
 */
export type PackedRv = string | number;

export function packRv(rv: string): PackedRv {
  const len = rv.length;
  if (len === 0 || len > 10 || (len > 1 && rv.charCodeAt(0) === 48)) return rv; // '' , too long, leading '0'
  let n = 0;
  for (let i = 0; i < len; i++) {
    const d = rv.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return rv;
    n = n * 10 + d;
  }
  return n <= 0x7fffffff ? n : rv;
}
