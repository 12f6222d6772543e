/**
 * The raw JSON.parse rate of a set of captured lines: the floor any JSON ingest in Node.js
 * sits on. One warm-up pass, then the median (and the best) of `passes` timed passes, in lines
 * per second.
 */
import { median } from './stats.js';

export function jsonParseRate(lines: readonly string[], passes = 7): { eventsPerS: number; bestEventsPerS: number; lines: number; bytes: number } | undefined {
  if (lines.length === 0) return undefined;
  let sink = 0;
  const pass = () => {
    const t0 = performance.now();
    for (const l of lines) sink += (JSON.parse(l) as { type?: string }).type === 'ADDED' ? 1 : 0;
    return performance.now() - t0;
  };
  pass();
  const times = Array.from({ length: passes }, pass);
  const ms = median(times) ?? 0;
  const bytes = lines.reduce((n, l) => n + l.length, 0);
  if (sink < 0) console.log(sink); // keeps the parse observable
  return { eventsPerS: lines.length / (ms / 1000), bestEventsPerS: lines.length / (Math.min(...times) / 1000), lines: lines.length, bytes };
}
