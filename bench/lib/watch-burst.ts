/**
 * The simulator's side of the watch-ingest measurement (e2e-watch-ingest.ts): a backlog of
 * pod MODIFIED events that the controller's pod watch receives as fast as it can read it.
 *
 * In one synchronous step, so that no frame of the burst reaches a live stream: every open
 * pod watch is ended as a server timeout ends it, then `count` pods are modified. A client
 * that watches again from the last resourceVersion it saw is served the burst from the
 * store's event window, written with backpressure only, so the reader sets the pace. The
 * change is an annotation: a MODIFIED that leaves the attach/detach controller's view of the
 * pod as it was, as most pod events in a real cluster do (status, labels, annotations).
 * `count` must leave room in the window (100,000 events per resource by default), or the
 * resume is answered 410 and the client relists. With `--expose-gc` the simulator then collects
 * its heap in the same step (below).
 */
import { writeFileSync } from 'node:fs';
import type { Simulator } from '../../src/sim/server/index.js';

export const BURST_ANNOTATION = 'bench.fleet-attach.io/watch-burst';

export interface WatchBurstCommit {
  /** The store's resourceVersion just before the burst. */
  rv0: number;
  /** Pods modified (one event each). */
  count: number;
  /** Pod watches ended before the burst (the controller has one). */
  endedWatches: number;
  /** Time the simulator took to commit the burst, ms. */
  commitMs: number;
  /** Its full collection after the commit (the child runs with --expose-gc), ms; null without one. */
  gcMs: number | null;
}

/** Ends the pod watches and commits `count` pod modifications (the first pods in key order). */
export function commitWatchBurst(sim: Pick<Simulator, 'store' | 'server'>, count: number, round: number): WatchBurstCommit {
  const { store } = sim;
  // The keys alone: the filter sees each stored pod's key and keeps no item.
  const keys: string[] = [];
  const collect = (_json: string, key: string): boolean => {
    if (keys.length < count) keys.push(key);
    return false;
  };
  store.listPage('pods', { filter: collect });
  const t0 = performance.now();
  const endedWatches = sim.server.endWatches('pods');
  const rv0 = store.resourceVersion();
  let done = 0;
  for (const key of keys) {
    const slash = key.indexOf('/');
    const committed = store.mutate('pods', key.slice(0, slash), key.slice(slash + 1), (pod) => {
      pod.metadata.annotations = { ...pod.metadata.annotations, [BURST_ANNOTATION]: String(round) };
    });
    if (committed) done++;
  }
  const commitMs = performance.now() - t0;
  // The burst leaves ~80,000 objects' worth of replaced JSON behind. Collected now, before the
  // controller's watch resumes, rather than by a full collection of the simulator's heap in the
  // middle of serving the burst (seen at 50k: ~1.5 s with the stream stalled), which would time
  // the harness, not the reader.
  const gc = (globalThis as { gc?: () => void }).gc;
  const t1 = performance.now();
  gc?.();
  return { rv0, count: done, endedWatches, commitMs, gcMs: gc ? performance.now() - t1 : null };
}

/** Writes the pod events after `rv0` as watch lines (the JSON.parse baseline's input); returns how many. */
export function writeBurstLines(sim: Pick<Simulator, 'store'>, rv0: number, file: string): number {
  const events = sim.store.eventsAfter('pods', rv0) ?? [];
  writeFileSync(file, events.map((e) => `{"type":"${e.type}","object":${e.json}}`).join('\n'));
  return events.length;
}
