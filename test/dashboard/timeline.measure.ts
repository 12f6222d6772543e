/**
 * Measures the timeline's observe (called at every controller decision) and a volume's read,
 * the packed timeline (src/dashboard/timeline.ts) beside the array-based reference model
 * (timeline-reference.ts): N events (default a million) over N/3 volumes, each volume told
 * desired-added (with its pod), attach-started and attach-succeeded, at the default bounds
 * (100k entries, so most events also evict one). Not a test (no assertions; numbers depend on
 * the machine): run it by hand, e.g.
 *   node --expose-gc --import tsx test/dashboard/timeline.measure.ts 1000000
 * Prints µs per operation, and the heap each timeline retains when full, after a full collection.
 */
import { createTimeline, type Timeline } from '../../src/dashboard/timeline.js';
import type { ControllerEvent } from '../../src/operations/controller-observer.js';
import { ReferenceTimeline } from './timeline-reference.js';

const n = Number(process.argv[2] ?? 1_000_000);
const volumes = Math.ceil(n / 3);
const events: ControllerEvent[] = [];
for (let v = 0; v < volumes; v++) {
  const volume = `kubernetes.io/csi/measure.csi.fleet-attach.io^pvc-${v.toString(16).padStart(8, '0')}-7a6b-4c5d`;
  const node = `node-${Math.floor(v / 10)}`;
  events.push({ kind: 'desired-added', volume, node, pod: `team-${v % 97}/app-${v}-0` });
  events.push({ kind: 'attach-started', volume, node });
  events.push({ kind: 'attach-succeeded', volume, node });
}

function heapUsed(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

function run(name: string, make: () => Timeline): void {
  const before = heapUsed();
  const t = make();
  let t0 = performance.now();
  for (const e of events) t.observe(e);
  const observeMs = performance.now() - t0;
  const held = heapUsed() - before;
  let sink = 0;
  const reads = 100_000;
  t0 = performance.now();
  for (let i = 0; i < reads; i++) sink += t.entries(events[events.length - 1 - (i % 30_000) * 3].volume).length;
  const readMs = performance.now() - t0;
  console.log(`${name.padEnd(18)} observe ${((observeMs * 1000) / events.length).toFixed(3)} µs  entries(3 held) ${((readMs * 1000) / reads).toFixed(3)} µs  heap held full (${t.size()} entries): ${(held / 1e6).toFixed(1)} MB${sink > 0 ? '' : '!'}`);
}

for (let round = 0; round < 3; round++) {
  run('packed', () => createTimeline({ now: () => 1 }));
  run('reference (arrays)', () => new ReferenceTimeline({ now: () => 1 }));
}
