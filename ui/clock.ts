/**
 * Client-side time: one shared one-second ticker for countdowns and ages, and the formatting of
 * durations. An ETA is received as `etaMs` (time left at the server's answer) and counts down
 * from the moment of receipt; ages count up from `since` on the controller's clock, corrected by
 * the offset of the latest answer that carried the controller's `now`.
 */
import { useEffect, useState } from 'preact/hooks';

const tickers = new Set<() => void>();
setInterval(() => { for (const t of tickers) t(); }, 1000);

/** Re-renders the caller every second; returns Date.now(). */
export function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = () => setNow(Date.now());
    tickers.add(t);
    return () => { tickers.delete(t); };
  }, []);
  return now;
}

let serverOffsetMs = 0;
/** Records the controller's clock of an answer (epoch ms). */
export function observeServerNow(serverNow: number | undefined): void {
  if (serverNow !== undefined) serverOffsetMs = serverNow - Date.now();
}
/** The controller's clock now, as far as the browser can tell. */
export function serverNow(now = Date.now()): number {
  return now + serverOffsetMs;
}

/** A time on the controller's clock (which need not be the wall clock) as a browser epoch time. */
export function wallTime(serverT: number): number {
  return serverT - serverOffsetMs;
}

/** 0.4 s, 12 s, 3m 05s, 2h 10m, 3d 4h. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  const neg = ms < 0;
  const a = Math.abs(ms);
  const s = Math.floor(a / 1000);
  let out: string;
  if (a < 10_000) out = `${(a / 1000).toFixed(a < 1000 ? 1 : 0)}s`;
  else if (s < 60) out = `${s}s`;
  else if (s < 3600) out = `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  else if (s < 86_400) out = `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  else out = `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
  return neg ? `-${out}` : out;
}
