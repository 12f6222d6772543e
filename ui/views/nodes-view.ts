/**
 * V7, `#/nodes?q=&state=`: every node as a windowed list (100k nodes cost one window of rows at a
 * time), with a name-prefix search and a state filter done by the server.
 */
import { html } from 'htm/preact';
import { useCallback, useEffect } from 'preact/hooks';
import { api, NODE_STATES, type NodeRow, type NodeState } from '../api.js';
import { StateLabel } from '../components/state-label.js';
import { PlaceholderRow, VirtualTable } from '../components/virtual-table.js';
import { useListKeys } from '../keyboard.js';
import { href, navigate, setQuery, type Route } from '../router.js';
import { stream } from '../stream.js';
import { useWindowedRows } from '../windowed-rows.js';

const COLUMNS = [
  { label: 'node', width: 'auto' },
  { label: 'state', width: '11em' },
  { label: 'desired', width: '7em' },
  { label: 'attached', width: '7em' },
  { label: 'uncertain', width: '7em' },
  { label: 'status write', width: '9em' },
];

export function nodeState(n: Pick<NodeRow, 'healthy' | 'outOfService' | 'managed'>): string {
  if (n.outOfService) return 'out of service';
  if (!n.managed) return 'unmanaged';
  return n.healthy ? 'ready' : 'not ready';
}

function NodeRowView(props: { n: NodeRow; selected: boolean; onSelect: () => void }) {
  const n = props.n;
  return html`<tr data-testid="node-row" data-node=${n.name} class=${props.selected ? 'selected' : ''} aria-selected=${props.selected} onClick=${props.onSelect}>
    <td class="ellipsis"><a href=${href.node(n.name)}>${n.name}</a></td>
    <td><${StateLabel} state=${nodeState(n)} /></td>
    <td>${n.desired}</td><td>${n.attached}</td><td>${n.uncertain}</td>
    <td>${n.statusUpdateNeeded ? html`<${StateLabel} state="pending" text="pending" />` : 'written'}</td>
  </tr>`;
}

export function NodesView(props: { route: Route }) {
  const prefix = props.route.query.get('q') ?? '';
  const stateParam = props.route.query.get('state') ?? '';
  const state = (NODE_STATES as readonly string[]).includes(stateParam) ? (stateParam as NodeState) : undefined;
  const listing = `${state ?? ''}|${prefix}`;
  const rows = useWindowedRows(`nodes|${listing}`, (offset, limit) => api.nodes(offset, limit, prefix, state));
  useEffect(() => {
    stream.use(['nodes']);
    return stream.onData({ invalidate: (t) => { if (t === 'nodes' || t === '*') rows.reload(); } });
  }, [listing]);
  const open = useCallback((i: number) => { const r = rows.row(i); if (r) navigate(href.node(r.name)); }, [rows]);
  const [selected, setSelected] = useListKeys(Math.max(0, rows.total), open, listing);
  const onSearch = (e: Event) => setQuery(props.route, { q: (e.currentTarget as HTMLInputElement).value.trim() });

  return html`<section class="list">
    <h1>Nodes ${rows.total >= 0 ? html`<span class="count">${rows.total.toLocaleString('en-US')}</span>` : null}</h1>
    <form class="filters" role="search" onSubmit=${(e: Event) => e.preventDefault()}>
      <label>name starts with <input data-testid="search" type="search" name="q" value=${prefix} placeholder="node-0042  ( / )" onChange=${onSearch} /></label>
      <label>state <select name="state" onChange=${(e: Event) => setQuery(props.route, { state: (e.currentTarget as HTMLSelectElement).value })}>
        <option value="" selected=${state === undefined}>any</option>
        ${NODE_STATES.map((s) => html`<option value=${s} selected=${s === state}>${s}</option>`)}</select></label>
    </form>
    <${VirtualTable} label="nodes" rows=${rows} columns=${COLUMNS} selected=${selected} empty="No node matches."
      renderRow=${(n: NodeRow | undefined, i: number, sel: boolean) => n === undefined ? html`<${PlaceholderRow} columns=${COLUMNS.length} />`
        : html`<${NodeRowView} key=${n.name} n=${n} selected=${sel} onSelect=${() => setSelected(i)} />`} />
  </section>`;
}
