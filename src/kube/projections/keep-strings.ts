/**
 * A list of strings from a new projection, with the stored projection's copies put in place of
 * equal ones: `old` itself when the two are equal, else `fresh` with each element found in `old`
 * replaced by `old`'s string. Lists here are short (one node's volumes) and mostly in the same
 * order, so the scan follows `old` and searches it only where the two part.
 */
export function keepStrings(old: readonly string[], fresh: string[]): string[] {
  const n = fresh.length;
  if (n === old.length) {
    let i = 0;
    while (i < n && fresh[i] === old[i]) i++;
    if (i === n) return old as string[];
  }
  let j = 0;
  for (let i = 0; i < n; i++) {
    const s = fresh[i]!;
    if (j < old.length && old[j] === s) {
      fresh[i] = old[j++]!;
      continue;
    }
    const k = old.indexOf(s);
    if (k >= 0) {
      fresh[i] = old[k]!;
      j = k + 1;
    }
  }
  return fresh;
}
