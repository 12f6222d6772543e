// Preloaded (`node --import <this> …`) into a process a bench spawns with an IPC channel: it
// records the process's GC pauses (perf_hooks `gc` entries: the main thread's stop per scavenge,
// mark-compact, incremental marking step) and answers `{ type: 'gc-pauses', from, to }` (epoch
// ms) with each kind's count, total and longest pause that started in that window. The bench
// measures the controller's collections this way without the controller exposing them. Plain JS
// so the measured process loads no TypeScript loader; it keeps the channel unreferenced, so it
// never holds the process alive. Pauses are kept in typed-array rings (the last 65,536).
// It also samples the process's memory every 5 s (resident set, V8 heap committed and used,
// external and ArrayBuffer bytes) and answers `{ type: 'memory-timeline' }` with the samples.
import { constants, PerformanceObserver } from 'node:perf_hooks';

if (process.channel) {
  const SIZE = 1 << 16;
  const starts = new Float64Array(SIZE);
  const durations = new Float64Array(SIZE);
  const kinds = new Uint8Array(SIZE);
  let written = 0;
  const KIND_NAMES = ['other', 'minor', 'major', 'incremental'];
  const kindOf = (k) =>
    k === constants.NODE_PERFORMANCE_GC_MINOR ? 1 : k === constants.NODE_PERFORMANCE_GC_MAJOR ? 2 : k === constants.NODE_PERFORMANCE_GC_INCREMENTAL ? 3 : 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const i = written++ % SIZE;
      starts[i] = performance.timeOrigin + e.startTime;
      durations[i] = e.duration;
      kinds[i] = kindOf(e.detail?.kind ?? e.kind);
    }
  }).observe({ entryTypes: ['gc'] });
  const MEMORY_EVERY_MS = 5000;
  const memory = [];
  const t0 = performance.now();
  const mb = (b) => Math.round(b / 1048576);
  setInterval(() => {
    const u = process.memoryUsage();
    memory.push([Math.round((performance.now() - t0) / 1000), mb(u.rss), mb(u.heapTotal), mb(u.heapUsed), mb(u.external), mb(u.arrayBuffers)]);
  }, MEMORY_EVERY_MS).unref();
  process.on('message', (m) => {
    if (m?.type === 'memory-timeline') {
      process.send?.({ type: 'memory-timeline', id: m.id, columns: ['s', 'rss', 'heap_total', 'heap_used', 'external', 'array_buffers'], samples: memory });
      return;
    }
    if (!m || m.type !== 'gc-pauses') return;
    const out = {};
    for (const name of KIND_NAMES) out[name] = { count: 0, total_ms: 0, max_ms: 0 };
    const kept = Math.min(written, SIZE);
    for (let n = 0; n < kept; n++) {
      const i = (written - 1 - n) % SIZE;
      if (starts[i] < m.from || starts[i] > m.to) continue;
      const s = out[KIND_NAMES[kinds[i]]];
      s.count++;
      s.total_ms += durations[i];
      if (durations[i] > s.max_ms) s.max_ms = durations[i];
    }
    for (const name of KIND_NAMES) {
      out[name].total_ms = Math.round(out[name].total_ms);
      out[name].max_ms = Math.round(out[name].max_ms * 10) / 10;
    }
    process.send?.({ type: 'gc-pauses', id: m.id, pauses: out, complete: written <= SIZE || starts[written % SIZE] <= m.from });
  });
  process.channel.unref();
}
