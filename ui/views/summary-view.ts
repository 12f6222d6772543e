/**
 * V1, `#/?range=`: is the fleet converging, and if not, why? Tiles (each a link to the list it
 * counts), the convergence chart (history, then live samples), not-converged pairs by reason,
 * the wait-age histogram and the controller's health strip.
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type Dashboard, type History, type HistoryRange, type TileKey } from '../api.js';
import { formatDuration, observeServerNow, serverNow } from '../clock.js';
import { ConvergenceChart } from '../components/convergence-chart.js';
import { ReasonChip } from '../components/state-label.js';
import { href, setQuery, type Route } from '../router.js';
import { stream } from '../stream.js';

const RANGES: Record<HistoryRange, number> = { '15m': 15 * 60_000, '1h': 3_600_000, '6h': 6 * 3_600_000 };

const TILES: Array<{ key: TileKey; label: string; link: string }> = [
  { key: 'nodes', label: 'Nodes', link: href.nodes() },
  { key: 'nodesNotReady', label: 'Nodes not ready', link: href.nodes({ state: 'unhealthy' }) },
  { key: 'desired', label: 'Desired pairs', link: href.notConverged() },
  { key: 'attached', label: 'Attached pairs', link: href.nodes() },
  { key: 'notConverged', label: 'Not converged', link: href.notConverged() },
  { key: 'conflicts', label: 'Multi-attach conflicts', link: href.conflicts() },
  { key: 'opsRunning', label: 'Operations running', link: href.operations() },
  { key: 'opsBackoff', label: 'Operations backing off', link: href.operations() },
  { key: 'forcedDetaches1h', label: 'Forced detaches (1 h)', link: href.operations() },
];

function Bars(props: { items: Array<{ label: unknown; count: number; link?: string; note?: string }>; testid: string }) {
  const max = Math.max(1, ...props.items.map((i) => i.count));
  if (props.items.length === 0) return html`<p class="empty">None.</p>`;
  return html`<ul class="bars" data-testid=${props.testid}>${props.items.map((i) => html`<li>
    ${i.link ? html`<a href=${i.link}>${i.label}</a>` : html`<span>${i.label}</span>`}
    <span class="bar"><span class="fill" style=${{ width: `${(100 * i.count) / max}%` }}></span></span>
    <span class="count">${i.count}</span>${i.note ? html`<span class="note">${i.note}</span>` : null}
  </li>`)}</ul>`;
}

function HealthStrip(props: { d: Dashboard }) {
  const h = props.d.health;
  const ms = (v?: number) => (v === undefined ? '–' : `${v.toFixed(1)} ms`);
  const items: Array<[string, string]> = [
    ['role', `${h.role ?? '–'}${h.ready === false ? ' (not ready)' : ''}`],
    ['loop p99', ms(h.loopP99Ms)],
    ['plan p99', ms(h.planP99Ms)],
    ['API in flight', h.apiInFlight === undefined ? '–' : `${h.apiInFlight} (+${h.apiWaiting ?? 0} waiting)`],
    ['watches synced', h.watches === undefined ? '–' : `${h.watchesSynced ?? 0}/${h.watches}`],
  ];
  if (h.maxWatchLagMs !== undefined) items.push(['watch lag', formatDuration(h.maxWatchLagMs)]);
  return html`<dl class="health" data-testid="health-strip">${items.map(([k, v]) => html`<div><dt>${k}</dt><dd>${v}</dd></div>`)}</dl>`;
}

export function SummaryView(props: { route: Route }) {
  const range = (props.route.query.get('range') ?? '15m') as HistoryRange;
  const span = RANGES[range] ?? RANGES['15m'];
  const [d, setD] = useState<Dashboard | undefined>();
  const [history, setHistory] = useState<History>({ samples: [], annotations: [] });
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    let live = true;
    const load = () => {
      api.dashboard().then((x) => { if (live) { observeServerNow(x.now); setD(x); } }, (e: Error) => live && setError(e.message));
      api.history(range, 600).then((h) => live && setHistory(h), (e: Error) => live && setError(e.message));
    };
    load();
    stream.use(['summary', 'history']);
    const off = stream.onData({
      summary: (x) => { observeServerNow(x.now); setD(x); },
      history: (s) => setHistory((h) => {
        const from = s.t - span;
        const kept = h.samples.filter((p) => p.t >= from && p.t < s.t);
        return { samples: [...kept, s], annotations: h.annotations };
      }),
      invalidate: (topic) => { if (topic === '*') load(); },
    });
    return () => { live = false; off(); };
  }, [range]);

  if (error && !d) return html`<p class="error" role="alert">${error}</p>`;
  if (!d) return html`<p class="loading">Loading…</p>`;
  const now = serverNow();
  return html`<section class="summary">
    <div class="tiles">${TILES.map((t) => html`<a class="tile" href=${t.link} data-testid=${`tile-${t.key}`} data-value=${d.tiles[t.key]}>
      <span class="value">${d.tiles[t.key].toLocaleString('en-US')}</span><span class="label">${t.label}</span></a>`)}</div>
    <${HealthStrip} d=${d} />
    <div class="range" role="group" aria-label="history range">${(Object.keys(RANGES) as HistoryRange[]).map((r) =>
      html`<button type="button" aria-pressed=${r === range} onClick=${() => setQuery(props.route, { range: r })}>${r}</button>`)}</div>
    <${ConvergenceChart} samples=${history.samples} annotations=${history.annotations} />
    <div class="columns">
      <section><h2>Not converged by reason</h2>
        <${Bars} testid="by-reason" items=${d.byReason.map((r) => ({
          label: html`<${ReasonChip} reason=${r.reason} side=${r.side} />`, count: r.count,
          link: href.notConverged({ reason: r.reason }),
          note: r.oldestSince === undefined ? undefined : `oldest ${formatDuration(now - r.oldestSince)}`,
        }))} /></section>
      <section><h2>How long pairs have waited</h2>
        <${Bars} testid="wait-age" items=${d.waitAge.map((b) => ({ label: b.label, count: b.count }))} /></section>
    </div>
  </section>`;
}
