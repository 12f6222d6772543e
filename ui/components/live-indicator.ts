/**
 * Whether what the page shows is live: "live · 0.4 s ago" or "stale 12 s — reconnecting", in text
 * and icon, and a banner while stale (the stream errored, or nothing arrived for two heartbeats; the
 * first connection gets three seconds before the banner shows).
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { formatDuration } from '../clock.js';
import { stream, type StreamStatus } from '../stream.js';

function useStreamStatus(): StreamStatus {
  const [s, setS] = useState(stream.status);
  useEffect(() => stream.onStatus(setS), []);
  return s;
}

export function LiveIndicator() {
  const s = useStreamStatus();
  const ago = s.lastEventAt === 0 ? '' : ` · ${formatDuration(Date.now() - s.lastEventAt)} ago`;
  return html`<span data-testid="live-indicator" class=${`live ${s.stale ? 'stale' : 'ok'}`} role="status">
    <span aria-hidden="true">${s.stale ? '⚠' : '●'}</span> ${s.stale ? `stale${s.lastEventAt ? ` ${formatDuration(Date.now() - s.lastEventAt)}` : ''}` : `live${ago}`}</span>`;
}

export function StaleBanner() {
  const s = useStreamStatus();
  // The first connection gets a moment before the page calls itself interrupted.
  if (!s.stale || (s.lastEventAt === 0 && Date.now() - s.since < 3000)) return null;
  return html`<div data-testid="stale-banner" class="banner" role="alert">
    <span aria-hidden="true">⚠</span> Live updates are interrupted${s.connected ? ' (no message for over 30 s)' : ''}; the numbers may be out of date. Reconnecting…
  </div>`;
}
