/**
 * New-pod-to-VolumeAttachment latency taken inside the simulator process, from the store's
 * commits: a pod's latency runs from the commit that created it to the commit of its
 * VolumeAttachment (and on to the commit that set `status.attached`), both on the simulator's
 * clock. That is the interval as the API server records it, the one creationTimestamps would
 * give at millisecond resolution.
 *
 * Why not the bench's own watches (pod-va-tracker.ts, still `--pod-va-source watch`): they are
 * three more watch streams on the machine under test, ~6,600 events/s at 10k nodes under churn,
 * each parsed by the bench (0.07-0.09 of a core on a 2-core machine the simulator and controller
 * nearly fill). Both sources over one window agree within 1-5% (docs/performance.md), and alternating runs showed no difference in the tail beyond the
 * runs' spread; this one is the interval the API server records and keeps the bench's CPU out
 * of the minute. A subscriber here reads the object the store lends while it delivers (no
 * parse), and a VolumeAttachment's object only while a timed pod waits for its attachment.
 *
 * The JSON.parse baseline's pod lines are read, when asked after the window, from the store's
 * watch window of pods (the changes a watch resuming from its oldest event would be sent), so
 * timing keeps no text alive.
 */
import { writeFileSync } from 'node:fs';
import type { ServableStore } from '../../src/sim/store/servable-store.js';
import type { StoreEvent } from '../../src/sim/store/sim-store.js';
import { PodVaLatency, podFacts, pvFacts, type PodVaResult } from './pod-va-latency.js';

export interface CommitPodVa {
  beginWindow(): void;
  endWindow(): void;
  result(): PodVaResult;
  /** Writes the pod changes still in the store's watch window as watch lines (one per line) to `file`; returns how many. */
  writePodLines(file: string): number;
  stop(): void;
}

/** Subscribes to `store` now: changes committed from here on are seen. */
export function createCommitPodVa(store: Pick<ServableStore, 'subscribe' | 'eventsAfter' | 'oldestResumableRv'>): CommitPodVa {
  const latency = new PodVaLatency();
  const onEvent = (ev: StoreEvent): void => {
    if (ev.resource === 'pods') {
      latency.podEvents++;
      if (ev.type === 'MODIFIED') return;
      const pod = podFacts(ev.view() as unknown as Parameters<typeof podFacts>[0]);
      if (ev.type === 'DELETED') latency.podDeleted(pod);
      else latency.podAdded(pod, performance.now());
    } else if (ev.resource === 'volumeattachments') {
      latency.vaEvents++;
      if (ev.type === 'DELETED') return;
      const now = performance.now();
      // Only a timed pod's attachment needs the object read.
      const attached = latency.awaitsAttach(ev.name) && (ev.view() as { status?: { attached?: boolean } }).status?.attached === true;
      latency.vaChanged(ev.name, attached, now);
    } else if (ev.resource === 'persistentvolumes' && ev.type === 'ADDED') {
      const pv = pvFacts(ev.view() as Parameters<typeof pvFacts>[0]);
      if (pv) latency.pvAdded(pv.claim, pv.source);
    }
  };
  const unsubscribe = store.subscribe(onEvent);
  return {
    beginWindow: () => latency.beginWindow(performance.now()),
    endWindow: () => latency.endWindow(),
    result: () => latency.result(performance.now()),
    writePodLines(file) {
      const events = store.eventsAfter('pods', store.oldestResumableRv('pods')) ?? [];
      writeFileSync(file, events.map((e) => `{"type":"${e.type}","object":${e.json}}`).join('\n'));
      return events.length;
    },
    stop: unsubscribe,
  };
}
