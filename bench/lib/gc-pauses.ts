/**
 * This process's GC pauses (perf_hooks `gc` entries: one per scavenge, mark-compact, incremental
 * marking step or weak-callback pass, its duration the time the main thread was stopped),
 * summed per kind over chosen time windows. The benches use it to show how much of a latency
 * tail is the collector's. Entries arrive asynchronously, so windows are matched by each
 * entry's start time, not by when it was delivered.
 */
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

export interface GcKindStats {
  count: number;
  total_ms: number;
  max_ms: number;
}

export interface GcPauseStats {
  /** Length of the windows summed, s. */
  seconds: number;
  minor: GcKindStats;
  major: GcKindStats;
  incremental: GcKindStats;
  /** Pauses of 50 ms or more, any kind. */
  over_50ms: number;
}

/** One pause, for placing it in time. */
export interface GcPause {
  /** performance.now() ms of this process at the pause's start. */
  start: number;
  duration: number;
  kind: 'minor' | 'major' | 'incremental' | 'other';
}

export interface GcRecorder {
  /** Sums over the windows `[start, end]` (performance.now() ms). */
  stats(windows: ReadonlyArray<readonly [number, number]>): GcPauseStats;
  /** The pauses of at least `minMs` that started in the windows, in order. */
  longPauses(windows: ReadonlyArray<readonly [number, number]>, minMs: number): GcPause[];
  close(): void;
}

/** The name of a perf_hooks gc entry's kind. */
function kindOf(k: number | undefined): GcPause['kind'] {
  return k === constants.NODE_PERFORMANCE_GC_MINOR ? 'minor' : k === constants.NODE_PERFORMANCE_GC_MAJOR ? 'major' : k === constants.NODE_PERFORMANCE_GC_INCREMENTAL ? 'incremental' : 'other';
}

function within(windows: ReadonlyArray<readonly [number, number]>, p: GcPause): boolean {
  return windows.some(([a, b]) => p.start >= a && p.start < b);
}

/** At most this many pauses are kept (a long bench at 100k nodes sees ~10 per second). */
const MAX_KEPT = 1_000_000;

export function createGcRecorder(): GcRecorder {
  const pauses: GcPause[] = [];
  const take = (entries: PerformanceEntry[]) => {
    for (const e of entries as Array<PerformanceEntry & { detail?: { kind?: number } }>) {
      if (pauses.length < MAX_KEPT) pauses.push({ start: e.startTime, duration: e.duration, kind: kindOf(e.detail?.kind) });
    }
  };
  const observer = new PerformanceObserver((list) => take(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  return {
    stats(windows) {
      take(observer.takeRecords());
      const sum = () => ({ count: 0, total_ms: 0, max_ms: 0 });
      const out: GcPauseStats = { seconds: 0, minor: sum(), major: sum(), incremental: sum(), over_50ms: 0 };
      for (const [a, b] of windows) out.seconds += (b - a) / 1000;
      for (const p of pauses) {
        if (!within(windows, p)) continue;
        if (p.duration >= 50) out.over_50ms++;
        if (p.kind === 'other') continue;
        const k = out[p.kind];
        k.count++;
        k.total_ms += p.duration;
        k.max_ms = Math.max(k.max_ms, p.duration);
      }
      const round = (k: GcKindStats): GcKindStats => ({ count: k.count, total_ms: Math.round(k.total_ms), max_ms: Math.round(k.max_ms * 10) / 10 });
      return { seconds: Math.round(out.seconds * 10) / 10, minor: round(out.minor), major: round(out.major), incremental: round(out.incremental), over_50ms: out.over_50ms };
    },
    longPauses(windows, minMs) {
      take(observer.takeRecords());
      return pauses.filter((p) => p.duration >= minMs && within(windows, p)).sort((x, y) => x.start - y.start);
    },
    close() {
      observer.disconnect();
    },
  };
}
