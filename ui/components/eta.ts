/**
 * A countdown: `etaMs` is the time left when the answer was received (`receivedAt`, Date.now()),
 * and it ticks here without asking the server again. Without an ETA the server's `etaWhy` is
 * shown. `data-eta-ms` keeps the value received, for comparison with the API.
 */
import { html } from 'htm/preact';
import { formatDuration, useNow } from '../clock.js';

export function Eta(props: { etaMs?: number; etaWhy?: string; receivedAt: number }) {
  const now = useNow();
  if (props.etaMs === undefined) {
    return html`<span data-testid="eta" class="eta none" title=${props.etaWhy ?? ''}>${props.etaWhy ?? '—'}</span>`;
  }
  const left = props.etaMs - (now - props.receivedAt);
  return html`<span data-testid="eta" class="eta" data-eta-ms=${props.etaMs}>${left > 0 ? `in ${formatDuration(left)}` : 'due now'}</span>`;
}

/** Time since `since` (controller clock, epoch ms), ticking. */
export function Age(props: { since: number; serverNow: (now: number) => number }) {
  const now = useNow();
  return html`<span class="age">${formatDuration(props.serverNow(now) - props.since)}</span>`;
}
