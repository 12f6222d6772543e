/**
 * V5, `#/volumes/<encodeURIComponent(uniqueName)>`: one volume — identity and policy, where it is
 * wanted and attached (state, reason, `waitingFor`, ETA per node) — and its timeline: what the
 * controller did to it and why, newest last.
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type TimelineEntry, type VolumeDetail } from '../api.js';
import { formatDuration } from '../clock.js';
import { Eta } from '../components/eta.js';
import { Kubectl, kubectl } from '../components/kubectl.js';
import { ReasonChip, StateLabel } from '../components/state-label.js';
import { href } from '../router.js';
import { stream } from '../stream.js';

export function VolumeView(props: { name: string }) {
  const [vol, setVol] = useState<(VolumeDetail & { at: number }) | undefined>();
  const [timeline, setTimeline] = useState<TimelineEntry[]>([]);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    setVol(undefined);
    setError(undefined);
    const load = () => {
      api.volume(props.name).then((v) => live && setVol({ ...v, at: Date.now() }),
        (e: Error) => live && setError(e instanceof ApiError && e.status === 404 ? `No volume named ${props.name}.` : e.message));
      api.timeline(props.name).then((t) => live && setTimeline(t), () => {});
    };
    load();
    stream.use([`volume:${props.name}`]);
    const off = stream.onData({ invalidate: (t) => { if (t === `volume:${props.name}` || t === '*') load(); } });
    return () => { live = false; off(); };
  }, [props.name]);
  if (!vol) return error ? html`<p class="error" role="alert">${error}</p>` : html`<p class="loading">Loading…</p>`;

  return html`<section class="detail">
    <h1>Volume <span class="name">${vol.specName ?? vol.name}</span></h1>
    <dl class="facts">
      <div><dt>unique name</dt><dd><code>${vol.name}</code></dd></div>
      ${vol.pvName ? html`<div><dt>PersistentVolume</dt><dd>${vol.pvName} <${Kubectl} cmd=${kubectl.getPv(vol.pvName)} /></dd></div>` : null}
      <div><dt>driver</dt><dd>${vol.driver ?? vol.plugin ?? '–'}</dd></div>
      <div><dt>access modes</dt><dd>${vol.accessModes.join(', ') || '–'} (multi-attach ${vol.multiAttach})</dd></div>
      <div><dt>attached to</dt><dd>${vol.attachedTo.length === 0 ? 'no node' : vol.attachedTo.map((n) => html`<a href=${href.node(n)}>${n}</a> `)}</dd></div>
      ${vol.lastError ? html`<div><dt>last error</dt><dd>${vol.lastError.op} on ${vol.lastError.node}, ${formatDuration(vol.lastError.ageMs)} ago: ${vol.lastError.message}</dd></div>` : null}
      ${vol.waitingFor ? html`<div><dt>waiting for</dt><dd>${vol.waitingFor}</dd></div>` : null}
    </dl>
    <h2>Placement (${vol.nodeCount} node${vol.nodeCount === 1 ? '' : 's'})</h2>
    <table class="grid pairs"><thead><tr><th scope="col">node</th><th scope="col">state</th><th scope="col">reason</th>
      <th scope="col">waiting for</th><th scope="col">moves</th><th scope="col">check</th></tr></thead>
    <tbody>${vol.nodes.map((p) => html`<tr data-testid="pair-row" data-volume=${p.volume} data-node=${p.node} data-reason=${p.reason ?? ''} data-side=${p.side ?? ''}>
      <td><a href=${href.node(p.node)}>${p.node}</a><div class="pods">${p.pods.map((pod) => html`<span class="pod">${pod.namespace}/${pod.name ?? pod.uid}</span>`)}</div></td>
      <td><${StateLabel} state=${p.state} />${p.desired ? '' : html`<div class="note">not desired</div>`}</td>
      <td>${p.reason ? html`<${ReasonChip} reason=${p.reason} side=${p.side} />` : '–'}</td>
      <td><span data-testid="waiting-for">${p.waitingFor ?? ''}</span></td>
      <td>${p.reason ? html`<${Eta} etaMs=${p.etaMs} etaWhy=${p.etaWhy} receivedAt=${vol.at} />` : '–'}</td>
      <td class="cmds">${p.attachmentName ? html`<${Kubectl} cmd=${kubectl.getVolumeAttachment(p.attachmentName)} />` : null}
        <${Kubectl} cmd=${kubectl.volumesInUse(p.node)} /></td>
    </tr>`)}</tbody></table>
    <h2>Timeline</h2>
    ${timeline.length === 0 ? html`<p class="empty">No recorded events for this volume.</p>` : html`<ol class="timeline">${timeline.map((t) =>
      html`<li data-testid="timeline-entry" data-kind=${t.kind}><time datetime=${new Date(t.t).toISOString()}>${new Date(t.t).toLocaleTimeString()}</time>
        <${StateLabel} state=${t.kind} /> ${t.node ? html`<a href=${href.node(t.node)}>${t.node}</a> ` : null}<span>${t.text}</span></li>`)}</ol>`}
  </section>`;
}
