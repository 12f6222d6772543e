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
 * way, so the polls' lag cancels out; the few polls add ~64 µs of controller CPU each.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { nextMessage, type Child } from './children.js';
import type { ControllerProbe, ControllerSummary } from './controller-probe.js';
import { jsonParseRate } from './json-parse-rate.js';
import type { SimChildCommand, SimChildMessage } from './sim-child.js';
import { round } from './stats.js';

/** The burst's size: within the simulator's watch window (100,000 events per resource). */
export const WATCH_BURST_MAX = 80_000;
/** Time for churn's graceful deletions to finish before the burst. */
const SETTLE_MS = 3_000;
const POLL_MS = 2;
const TIMEOUT_MS = 5 * 60_000;

type Burst = Extract<SimChildMessage, { type: 'watch-burst' }>;

export interface WatchIngest {
  /** The record's fields: ingest_events_per_s and its JSON.parse baseline, with their details. */
  figures: Record<string, unknown>;
  /** The burst's events as watch lines (the baseline's input). */
  lines: string[];
}

export async function measureWatchIngest(probe: ControllerProbe, ctl: Child, sim: Child, pods: number, linesFile: string): Promise<WatchIngest> {
  const ask = async <T extends SimChildMessage['type']>(c: SimChildCommand, answer: T) => {
    const m = nextMessage<SimChildMessage>(sim, (x) => x.type === answer, 10 * 60_000);
    sim.process.send(c);
    return (await m) as Extract<SimChildMessage, { type: T }>;
  };
  await ask({ type: 'churn-stop' }, 'churn-stopped');
  await sleep(SETTLE_MS);
  const podEvents = (s: ControllerSummary) => s.watches.find((w) => w.resource === 'pods')?.events ?? 0;
  const restarts = (s: ControllerSummary) => s.watches.find((w) => w.resource === 'pods')?.restarts ?? 0;
  const relists = (s: ControllerSummary) => s.watches.find((w) => w.resource === 'pods')?.relists ?? 0;
  const before = await probe.summary();
  const e0 = podEvents(before);
  const burst: Burst = await ask({ type: 'watch-burst', count: Math.min(WATCH_BURST_MAX, pods), round: 1 }, 'watch-burst');
  let first: { t: number; n: number } | undefined;
  let last: { t: number; n: number; s: ControllerSummary };
  const deadline = performance.now() + TIMEOUT_MS;
  for (;;) {
    const s = await probe.summary();
    const t = performance.now();
    const n = podEvents(s) - e0;
    if (first === undefined && n > 0) first = { t, n };
    if (n >= burst.count) {
      last = { t, n, s };
      break;
    }
    if (t > deadline) throw new Error(`watch ingest: ${n} of ${burst.count} burst events applied before the timeout`);
    if (ctl.process.exitCode !== null) throw new Error(`controller exited (${ctl.process.exitCode}) during the watch burst`);
    // A resume answered 410 relists instead of replaying: the burst is not measurable.
    if (relists(s) > relists(before)) throw new Error('watch ingest: the pod watch relisted instead of resuming (the burst outran the window)');
    await sleep(POLL_MS);
  }
  const written = await ask({ type: 'watch-burst-lines', rv0: burst.rv0, file: linesFile }, 'watch-burst-lines');
  const lines = written.lines > 0 ? readFileSync(linesFile, 'utf8').split('\n') : [];
  const span = first && last.t > first.t ? { events: last.n - first.n, ms: last.t - first.t } : undefined;
  const parse = jsonParseRate(lines);
  const rate = span ? span.events / (span.ms / 1000) : undefined;
  return {
    lines,
    figures: {
      ingest_events_per_s: rate === undefined ? null : Math.round(rate),
      json_parse_events_per_s: parse ? Math.round(parse.eventsPerS) : null,
      ingest_ratio: rate !== undefined && parse ? round(rate / parse.eventsPerS, 3) : null,
      watch_ingest: {
        burst_events: burst.count,
        measured_events: span?.events ?? 0,
        measured_ms: span ? round(span.ms, 1) : null,
        sim_commit_ms: round(burst.commitMs, 1),
        watches_ended: burst.endedWatches,
        watch_restarts: restarts(last.s) - restarts(before),
      },
      json_parse_sample: parse ? { source: 'the watch burst\'s pod events, as watch lines', lines: parse.lines, mean_bytes: Math.round(parse.bytes / parse.lines), best_events_per_s: Math.round(parse.bestEventsPerS) } : null,
    },
  };
}
