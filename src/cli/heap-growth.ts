/**
 * How far V8's heap may grow between full collections, as `run` and `demo` set it at start
 * (`--heap-growth`).
 *
 * The fleet's state lives in byte arenas and typed arrays outside the JavaScript heap, so a full
 * collection marks little (~100–250 MB at 50k–100k nodes) and is short. Left to its own
 * heuristics, V8 lets the old generation grow to about four times what survived the last full
 * collection when collections are that cheap: at 50k nodes the cold start's heap reached 740 MB
 * for ~160 MB live, the process's peak resident set. A fixed growth keeps the heap within
 * (1 + percent / 100) × live between collections, for more (short) full collections
 * (docs/performance.md, "Garbage collection and the heap").
 *
 * V8 reads the setting each time it computes the next limit, so setting it from the process
 * works (it is not one NODE_OPTIONS may carry).
 */
import { setFlagsFromString } from 'node:v8';

/** Percent 0 leaves V8's own heuristics in place. */
export function applyHeapGrowth(percent: number, setFlags: (flags: string) => void = setFlagsFromString): void {
  if (percent > 0) setFlags(`--heap-growing-percent=${percent}`);
}
