/**
 * Watch ingest: how many pod watch events per second the running controller takes in when the
 * events come faster than it reads them, and `JSON.parse` of the same events as lines.
 *
 * After the steady phase: churn stops, the fleet settles, then the simulator ends the pod
 * watch and commits a burst of pod changes (watch-burst.ts). The controller's reflector
 * watches again from its last resourceVersion and is served the burst at its own pace, through
 * client-node's `Watch`, TLS and its reflector, projection and handlers, as any watch event. The
 * rate is read on the controller's own counter of applied pod events (the summary's watch
 * health), polled every few milliseconds: events between the first poll that saw the burst and
 * the poll that saw its end, over the time between those two polls. Both ends are read the same
 * way, so the polls' lag cancels out. The polls cost the controller ~64 µs each (a summary),
 * some 3% of its time during a burst at one poll every ~2 ms, which the figure includes. Several
 * bursts in turn, each ending the watch the last one resumed; the figure is their median.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Child } from './children.js';
import type { ControllerProbe, ControllerSummary } from './controller-probe.js';
import { jsonParseRate } from './json-parse-rate.js';
import { askSim } from './sim-ask.js';
import type { SimChildCommand, SimChildMessage } from './sim-child.js';
import { median, round } from './stats.js';

/** The burst's size: within the simulator's watch window (100,000 events per resource). */
export const WATCH_BURST_MAX = 80_000;
/** Time for churn's graceful deletions to finish before the burst. */
const SETTLE_MS = 3_000;
const POLL_MS = 2;
/** Bursts per run; the run's figure is their median (one burst's rate moved by ~1.5× between runs). */
const ROUNDS = 3;
const TIMEOUT_MS = 5 * 60_000;

type Burst = Extract<SimChildMessage, { type: 'watch-burst' }>;

export interface WatchIngest {
  /** The record's fields: ingest_events_per_s and its JSON.parse baseline, with their details. */
  figures: Record<string, unknown>;
}

/** One burst as the controller took it in: the events between its first and last poll, and the time between them. */
interface Round {
  events: number;
  ms: number;
  burst: Burst;
  restarts: number;
}

export async function measureWatchIngest(probe: ControllerProbe, ctl: Child, sim: Child, pods: number, linesFile: string, rounds = ROUNDS): Promise<WatchIngest> {
  const ask = <T extends SimChildMessage['type']>(c: SimChildCommand, answer: T) => askSim(sim, c, answer, 10 * 60_000);
  const podWatch = (s: ControllerSummary) => s.watches.find((w) => w.resource === 'pods') ?? { events: 0, restarts: 0, relists: 0 };

  /** One burst, timed on the controller's counter of applied pod events. */
  const oneBurst = async (n: number): Promise<Round> => {
    const before = podWatch(await probe.summary());
    const burst: Burst = await ask({ type: 'watch-burst', count: Math.min(WATCH_BURST_MAX, pods), round: n }, 'watch-burst');
    let first: { t: number; n: number } | undefined;
    const deadline = performance.now() + TIMEOUT_MS;
    for (;;) {
      const w = podWatch(await probe.summary());
      const t = performance.now();
      const applied = w.events - before.events;
      if (first === undefined && applied > 0) first = { t, n: applied };
      if (applied >= burst.count) {
        if (!first || t <= first.t) throw new Error('watch ingest: the burst was applied between two polls');
        return { events: applied - first.n, ms: t - first.t, burst, restarts: w.restarts - before.restarts };
      }
      if (t > deadline) throw new Error(`watch ingest: ${applied} of ${burst.count} burst events applied before the timeout`);
      if (ctl.process.exitCode !== null) throw new Error(`controller exited (${ctl.process.exitCode}) during the watch burst`);
      // A resume answered 410 relists instead of replaying: the burst is not measurable.
      if (w.relists > before.relists) throw new Error('watch ingest: the pod watch relisted instead of resuming (the burst outran the window)');
      await sleep(POLL_MS);
    }
  };

  await ask({ type: 'churn-stop' }, 'churn-stopped');
  await sleep(SETTLE_MS);
  const done: Round[] = [];
  for (let i = 1; i <= rounds; i++) done.push(await oneBurst(i));
  // The baseline parses the last burst's lines: the same pods, the same size, as the others'.
  const lastBurst = done[done.length - 1]!.burst;
  const written = await ask({ type: 'watch-burst-lines', rv0: lastBurst.rv0, file: linesFile }, 'watch-burst-lines');
  const lines = written.lines > 0 ? readFileSync(linesFile, 'utf8').split('\n') : [];
  const parse = jsonParseRate(lines);
  const rates = done.map((r) => r.events / (r.ms / 1000));
  const rate = median(rates) ?? 0;
  return {
    figures: {
      ingest_events_per_s: Math.round(rate),
      json_parse_events_per_s: parse ? Math.round(parse.eventsPerS) : null,
      ingest_ratio: parse ? round(rate / parse.eventsPerS, 3) : null,
      watch_ingest: {
        burst_events: lastBurst.count,
        rounds: done.length,
        rounds_events_per_s: rates.map((r) => Math.round(r)),
        measured_events: done.map((r) => r.events),
        measured_ms: done.map((r) => round(r.ms, 1)),
        sim_commit_ms: done.map((r) => round(r.burst.commitMs, 1)),
        sim_gc_ms: done.map((r) => (r.burst.gcMs === null ? null : round(r.burst.gcMs, 1))),
        watches_ended: done.map((r) => r.burst.endedWatches),
        watch_restarts: done.map((r) => r.restarts),
      },
      json_parse_sample: parse ? { source: 'the last watch burst\'s pod events, as watch lines', lines: parse.lines, mean_bytes: Math.round(parse.bytes / parse.lines), best_events_per_s: Math.round(parse.bestEventsPerS) } : null,
    },
  };
}
