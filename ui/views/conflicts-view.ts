/**
 * V3, `#/conflicts`: one row per multi-attach conflict — the node that waits and its pods, the
 * holder node(s), the conflict's class and when the holder's detach is expected (force-detach
 * ETA, or why there is none) — with the kubectl commands that check each side.
 */
import { html } from 'htm/preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, type Conflict } from '../api.js';
import { Eta } from '../components/eta.js';
import { Kubectl, kubectl } from '../components/kubectl.js';
import { shortVolume } from '../components/pair-row.js';
import { StateLabel } from '../components/state-label.js';
import { formatDuration } from '../clock.js';
import { useListKeys } from '../keyboard.js';
import { href, navigate } from '../router.js';
import { stream } from '../stream.js';

export function ConflictsView() {
  const [data, setData] = useState<{ total: number; items: Conflict[]; at: number } | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    const load = () => api.conflicts().then((c) => live && setData({ ...c, at: Date.now() }), (e: Error) => live && setError(e.message));
    load();
    stream.use(['conflicts']);
    const off = stream.onData({ invalidate: (t) => { if (t === 'conflicts' || t === '*') load(); } });
    return () => { live = false; off(); };
  }, []);
  const items = data?.items ?? [];
  const open = useCallback((i: number) => { const c = items[i]; if (c) navigate(href.volume(c.volume)); }, [items]);
  const [selected, setSelected] = useListKeys(items.length, open, 'conflicts');
  if (!data) return error ? html`<p class="error" role="alert">${error}</p>` : html`<p class="loading">Loading…</p>`;

  return html`<section class="list">
    <h1>Multi-attach conflicts <span class="count">${data.total}</span></h1>
    ${items.length === 0 ? html`<p class="empty">No volume waits for another node to let go of it.</p>` : html`
    <table class="grid conflicts"><thead><tr>
      <th scope="col">volume</th><th scope="col">waiting side</th><th scope="col">holder side</th><th scope="col">class</th>
      <th scope="col">holder detach</th><th scope="col">check</th></tr></thead>
    <tbody>${items.map((c, i) => html`<tr data-testid="conflict-row" class=${i === selected ? 'selected' : ''} aria-selected=${i === selected}
        data-volume=${c.volume} data-node=${c.node} data-holder=${c.attachedTo.join(',')} data-class=${c.class ?? ''} onClick=${() => setSelected(i)}>
      <td class="ellipsis" title=${c.volume}><a href=${href.volume(c.volume)}>${c.specName ?? shortVolume(c.volume)}</a></td>
      <td><a href=${href.node(c.node)}>${c.node}</a>
        <div class="pods">${c.pods.map((p) => html`<span class="pod">${p.namespace}/${p.name ?? p.uid}</span>`)}${c.podCount > c.pods.length ? ` +${c.podCount - c.pods.length}` : ''}</div>
        ${c.waitingFor ? html`<div class="why" data-testid="waiting-for">${c.waitingFor}</div>` : null}</td>
      <td>${c.attachedTo.map((n) => html`<a href=${href.node(n)}>${n}</a> `)}
        ${c.holder ? html`<div class="holder-facts">
          <${StateLabel} state=${c.holder.outOfService ? 'out-of-service' : c.holder.healthy ? 'healthy' : 'unhealthy'} />
          <${StateLabel} state=${c.holder.mounted ? 'mounted' : 'not-mounted'} text=${c.holder.mounted ? 'mounted' : 'not mounted'} />
          ${c.holder.desired ? html`<span class="note">${c.holder.podCount} pod(s) there still want it</span>` : null}
          ${c.holder.detachTimerAgeMs !== undefined ? html`<span class="note">detach wanted for ${formatDuration(c.holder.detachTimerAgeMs)}</span>` : null}</div>` : null}</td>
      <td>${c.class ?? '–'}${c.multiAttachErrorReported ? html`<div class="note">Multi-Attach event emitted</div>` : null}</td>
      <td data-testid="holder-detach"><${Eta} etaMs=${c.holder?.detachInMs} etaWhy=${c.holder?.detachWhyNot ?? c.etaWhy} receivedAt=${data.at} /></td>
      <td class="cmds">${c.pods[0]?.name && c.pods[0].namespace ? html`<${Kubectl} cmd=${kubectl.describePod(c.pods[0].namespace, c.pods[0].name)} />` : null}
        ${c.attachedTo[0] ? html`<${Kubectl} cmd=${kubectl.volumesInUse(c.attachedTo[0])} />` : null}</td>
    </tr>`)}</tbody></table>`}
  </section>`;
}
