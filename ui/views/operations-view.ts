/**
 * V6, `#/operations`: attach and detach operations running or backing off — attempt, the retry
 * countdown, the last error — and the most frequent errors across them.
 */
import { html } from 'htm/preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, type Operations } from '../api.js';
import { formatDuration } from '../clock.js';
import { Eta } from '../components/eta.js';
import { shortVolume } from '../components/pair-row.js';
import { StateLabel } from '../components/state-label.js';
import { useListKeys } from '../keyboard.js';
import { href, navigate } from '../router.js';
import { stream } from '../stream.js';

export function OperationsView() {
  const [data, setData] = useState<(Operations & { at: number }) | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    const load = () => api.operations().then((o) => live && setData({ ...o, at: Date.now() }), (e: Error) => live && setError(e.message));
    load();
    stream.use(['operations']);
    const off = stream.onData({ invalidate: (t) => { if (t === 'operations' || t === '*') load(); } });
    return () => { live = false; off(); };
  }, []);
  const items = data?.items ?? [];
  const open = useCallback((i: number) => { const o = items[i]; if (o) navigate(href.volume(o.volume)); }, [items]);
  const [selected, setSelected] = useListKeys(items.length, open, 'operations');
  if (!data) return error ? html`<p class="error" role="alert">${error}</p>` : html`<p class="loading">Loading…</p>`;

  return html`<section class="list">
    <h1>Operations <span class="count">${data.total.pending} running, ${data.total.backoff} backing off</span></h1>
    ${data.topErrors.length > 0 ? html`<section><h2>Top errors</h2><ol class="top-errors">${data.topErrors.map((e) =>
      html`<li data-testid="top-error" data-count=${e.count}><span class="count">${e.count}×</span> <code>${e.message}</code>${e.nodes !== undefined ? html` <span class="note">on ${e.nodes} node${e.nodes === 1 ? '' : 's'}</span>` : null}</li>`)}</ol></section>` : null}
    ${items.length === 0 ? html`<p class="empty">No operation is running or backing off.</p>` : html`
    <table class="grid ops"><thead><tr><th scope="col">state</th><th scope="col">op</th><th scope="col">volume</th><th scope="col">node</th>
      <th scope="col">attempt</th><th scope="col">for</th><th scope="col">retry</th><th scope="col">last error</th></tr></thead>
    <tbody>${items.map((o, i) => html`<tr data-testid="op-row" class=${i === selected ? 'selected' : ''} aria-selected=${i === selected}
        data-volume=${o.volume} data-node=${o.node} data-state=${o.state} data-op=${o.op} data-retry-in-ms=${o.retryInMs ?? ''} data-attempt=${o.attempt ?? ''} data-duration-ms=${o.durationMs ?? ''} onClick=${() => setSelected(i)}>
      <td><${StateLabel} state=${o.state === 'pending' ? 'running' : 'backoff'} /></td>
      <td><${StateLabel} state=${o.op} />${o.volumeWide ? html`<div class="note">volume-wide</div>` : null}</td>
      <td class="ellipsis" title=${o.volume}><a href=${href.volume(o.volume)}>${shortVolume(o.volume)}</a></td>
      <td><a href=${href.node(o.node)}>${o.node}</a></td>
      <td>${o.attempt ?? '–'}</td>
      <td>${formatDuration(o.ageMs)}</td>
      <td>${o.state === 'backoff' ? html`<${Eta} etaMs=${o.retryInMs} etaWhy="no retry scheduled" receivedAt=${data.at} />` : '–'}</td>
      <td class="ellipsis" title=${o.lastError ?? ''}>${o.lastError ?? ''}</td>
    </tr>`)}</tbody></table>`}
  </section>`;
}
