/**
 * Measures what the node status updater's `flaggedNodes` (src/manager/adapters.ts) costs per
 * reconcile pass on a large fleet with a few nodes flagged, against the walk it replaced
 * (live node ids a page at a time in a generator, reproduced below as `walk`), side by side,
 * rounds interleaved: process CPU per call, and new-space bytes one call allocates (read around
 * a single call after a full collection). Not a test (no assertions;
 * numbers depend on the machine): run it by hand, e.g.
 *   node --expose-gc --import tsx test/manager/flagged-nodes.measure.ts 100000 50 7
 */
import { getHeapSpaceStatistics } from 'node:v8';
import { createWorldState, type WorldState } from '../../src/cache/world-state.js';
import { reportedAttachments } from '../../src/manager/adapters.js';

const nodeCount = Number(process.argv[2] ?? 100_000);
const flaggedCount = Number(process.argv[3] ?? 50);
const rounds = Number(process.argv[4] ?? 7);
const CALLS = 200;

/** The walk the adapter did before `flaggedNodes`. */
function* walk(state: WorldState): Generator<string> {
  if (state.counts().statusUpdatesNeeded === 0) return;
  for (let after = -1; ; ) {
    const ids = state.nodeIds(after, 4096);
    if (ids.length === 0) return;
    after = ids[ids.length - 1]!;
    for (const id of ids) if (state.statusUpdateNeeded(id)) yield state.nodeName(id);
  }
}

const state = createWorldState();
const ids = Array.from({ length: nodeCount }, (_, i) => {
  const id = state.internNode(`node-${i}`);
  state.setNodeManaged(id);
  return id;
});
for (let k = 0; k < flaggedCount; k++) {
  const i = Math.floor((k * nodeCount) / flaggedCount);
  state.markAttached(state.internVolume(`vol-${i}`), ids[i]!);
}
const report = reportedAttachments(state);
const impls: Record<string, () => string[]> = { current: () => [...report.flaggedNodes()], walk: () => [...walk(state)] };
for (const f of Object.values(impls)) if (f().length !== flaggedCount) throw new Error('the two disagree with the fleet');

const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_used_size;
const gc = (globalThis as { gc?: () => void }).gc;
const results: Record<string, { us: number[]; bytes: number[] }> = { current: { us: [], bytes: [] }, walk: { us: [], bytes: [] } };
for (let r = 0; r < rounds; r++) {
  for (const [name, f] of Object.entries(r % 2 === 0 ? impls : Object.fromEntries(Object.entries(impls).reverse()))) {
    gc?.();
    const before = newSpace();
    f();
    const after = newSpace();
    if (after >= before) results[name]!.bytes.push(after - before);
    const c0 = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) f();
    const c = process.cpuUsage(c0);
    results[name]!.us.push((c.user + c.system) / CALLS);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
console.log(`${nodeCount} nodes, ${flaggedCount} flagged, ${rounds} rounds of ${CALLS} calls`);
for (const [name, r] of Object.entries(results)) {
  console.log(`  ${name.padEnd(8)} ${median(r.us).toFixed(1).padStart(8)} µs CPU per call   ${Math.round(median(r.bytes)).toLocaleString('en-US').padStart(12)} bytes allocated per call`);
}
