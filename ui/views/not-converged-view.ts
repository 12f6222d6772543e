/**
 * V2, `#/not-converged?reason=&side=&groupBy=&sort=&q=`: every pair that is not converged, one
 * row each, as a windowed list over the server's index (sorted and filtered there), or grouped
 * (by reason, driver, node, namespace or error) into one row per group with a sample.
 */
import { html } from 'htm/preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, type NotConvergedGroup, type NotConvergedQuery, type Reason } from '../api.js';
import { formatDuration, serverNow } from '../clock.js';
import { PAIR_COLUMNS, PairRow } from '../components/pair-row.js';
import { PlaceholderRow, VirtualTable } from '../components/virtual-table.js';
import { useListKeys } from '../keyboard.js';
import { href, navigate, setQuery, type Route } from '../router.js';
import { stream } from '../stream.js';
import { useWindowedRows } from '../windowed-rows.js';

const GROUP_FILTER: Record<string, keyof NotConvergedQuery> = { reason: 'reason', driver: 'driver', node: 'node', namespace: 'namespace', error: 'q' };

function queryOf(route: Route): NotConvergedQuery {
  const g = (k: string) => route.query.get(k) ?? undefined;
  return { reason: g('reason'), side: g('side'), q: g('q'), sort: g('sort'), groupBy: g('groupBy'), driver: g('driver'), namespace: g('namespace'), node: g('node') };
}

function Filters(props: { route: Route; q: NotConvergedQuery; reasons: Reason[] }) {
  const { route, q } = props;
  const set = (k: string) => (e: Event) => setQuery(route, { [k]: (e.currentTarget as HTMLInputElement).value });
  const opt = (v: string, label: string, cur?: string) => html`<option value=${v} selected=${(cur ?? '') === v}>${label}</option>`;
  return html`<form class="filters" role="search" onSubmit=${(e: Event) => e.preventDefault()}>
    <label>search <input data-testid="search" type="search" name="q" value=${q.q ?? ''} placeholder="volume, node, pod…  ( / )" onChange=${set('q')} /></label>
    <label>reason <select name="reason" onChange=${set('reason')}>${opt('', 'any', q.reason)}${props.reasons.map((r) => opt(r.code, `${r.code} (${r.side})`, q.reason))}
      ${q.reason && !props.reasons.some((r) => r.code === q.reason) ? opt(q.reason, q.reason, q.reason) : null}</select></label>
    <label>side <select name="side" onChange=${set('side')}>${opt('', 'both', q.side)}${opt('attach', 'attach', q.side)}${opt('detach', 'detach', q.side)}</select></label>
    <label>sort <select name="sort" onChange=${set('sort')}>${opt('', 'oldest first', q.sort)}${opt('node', 'node', q.sort)}${opt('volume', 'volume', q.sort)}</select></label>
    <label>group by <select name="groupBy" onChange=${set('groupBy')}>${opt('', 'none', q.groupBy)}${['reason', 'driver', 'node', 'namespace', 'error'].map((g) => opt(g, g, q.groupBy))}</select></label>
  </form>`;
}

function Groups(props: { route: Route; q: NotConvergedQuery }) {
  const [groups, setGroups] = useState<{ total: number; groups: NotConvergedGroup[] } | undefined>();
  const key = JSON.stringify(props.q);
  useEffect(() => {
    let live = true;
    const load = () => api.notConvergedGroups(props.q).then((g) => live && setGroups(g), () => {});
    load();
    const off = stream.onData({ invalidate: (t) => { if (t === 'notConverged' || t === '*') load(); } });
    return () => { live = false; off(); };
  }, [key]);
  if (!groups) return html`<p class="loading">Loading…</p>`;
  const by = props.q.groupBy!;
  const now = serverNow();
  return html`<table class="grid groups"><thead><tr><th scope="col">${by}</th><th scope="col">pairs</th><th scope="col">oldest</th><th scope="col">sample</th></tr></thead>
    <tbody>${groups.groups.map((g) => html`<tr data-testid="group-row" data-key=${g.key}>
      <td><a href=${href.notConverged({ ...props.q, groupBy: undefined, [GROUP_FILTER[by] ?? 'q']: g.key })}>${g.key}</a></td>
      <td>${g.count}</td><td>${g.oldestSince === undefined ? '–' : formatDuration(now - g.oldestSince)}</td>
      <td class="ellipsis">${g.sample ? g.sample.waitingFor : ''}</td></tr>`)}</tbody></table>
    <p class="note">${groups.total} pairs in ${groups.groups.length} groups</p>`;
}

export function NotConvergedView(props: { route: Route }) {
  const q = queryOf(props.route);
  const key = JSON.stringify({ ...q, groupBy: undefined });
  const [reasons, setReasons] = useState<Reason[]>([]);
  useEffect(() => { api.reasons().then(setReasons); }, []);
  const rows = useWindowedRows(key, (offset, limit) => api.notConverged(q, offset, limit));
  useEffect(() => {
    stream.use(['notConverged']);
    return stream.onData({ invalidate: (t) => { if (t === 'notConverged' || t === '*') rows.reload(); } });
  }, [key]);
  const open = useCallback((i: number) => { const r = rows.row(i); if (r) navigate(href.node(r.node)); }, [rows]);
  const [selected, setSelected] = useListKeys(Math.max(0, rows.total), open, key);

  return html`<section class="list">
    <h1>Not converged ${rows.total >= 0 ? html`<span class="count">${rows.total.toLocaleString('en-US')} pairs</span>` : null}</h1>
    <${Filters} route=${props.route} q=${q} reasons=${reasons} />
    ${q.groupBy ? html`<${Groups} route=${props.route} q=${q} />` : html`<${VirtualTable} label="not-converged pairs" rows=${rows} columns=${PAIR_COLUMNS}
      selected=${selected} empty="Every desired volume is attached and every undesired one detached."
      renderRow=${(item: any, i: number, sel: boolean) => item === undefined ? html`<${PlaceholderRow} columns=${PAIR_COLUMNS.length} />`
        : html`<${PairRow} key=${`${item.volume}|${item.node}`} item=${item} selected=${sel} receivedAt=${rows.receivedAt} onSelect=${() => setSelected(i)} />`} />`}
  </section>`;
}
