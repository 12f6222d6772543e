/**
 * V4, `#/nodes/<name>`: one node — its state and counts — and every (volume, node) pair on it with
 * its state, reason, `waitingFor` sentence and ETA, next to the kubectl commands that check them.
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type NodeDetail } from '../api.js';
import { Eta } from '../components/eta.js';
import { Kubectl, kubectl } from '../components/kubectl.js';
import { shortVolume } from '../components/pair-row.js';
import { ReasonChip, StateLabel } from '../components/state-label.js';
import { href } from '../router.js';
import { stream } from '../stream.js';
import { nodeState } from './nodes-view.js';

export function NodeView(props: { name: string }) {
  const [node, setNode] = useState<(NodeDetail & { at: number }) | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    setNode(undefined);
    setError(undefined);
    const load = () => api.node(props.name).then((n) => live && setNode({ ...n, at: Date.now() }),
      (e: Error) => live && setError(e instanceof ApiError && e.status === 404 ? `No node named ${props.name}.` : e.message));
    load();
    stream.use([`node:${props.name}`]);
    const off = stream.onData({ invalidate: (t) => { if (t === `node:${props.name}` || t === '*') load(); } });
    return () => { live = false; off(); };
  }, [props.name]);
  if (!node) return error ? html`<p class="error" role="alert">${error}</p>` : html`<p class="loading">Loading…</p>`;

  const inUse = node.volumesInUse === undefined ? 'never observed (every volume counts as mounted)' : `${node.volumesInUse.length} volume(s)`;
  return html`<section class="detail">
    <h1>Node <span class="name">${node.name}</span> <${StateLabel} state=${nodeState(node)} /></h1>
    <dl class="facts">
      <div><dt>managed</dt><dd>${node.managed ? 'yes' : 'no (no controller-managed-attach-detach annotation)'}</dd></div>
      <div><dt>desired / attached / uncertain</dt><dd>${node.desired} / ${node.attached} / ${node.uncertain}</dd></div>
      <div><dt>status.volumesAttached</dt><dd>${node.statusUpdateNeeded ? 'write pending' : 'written'} <${Kubectl} cmd=${kubectl.volumesAttached(node.name)} /></dd></div>
      <div><dt>status.volumesInUse</dt><dd>${inUse} <${Kubectl} cmd=${kubectl.volumesInUse(node.name)} /></dd></div>
    </dl>
    <table class="grid pairs"><thead><tr><th scope="col">volume</th><th scope="col">state</th><th scope="col">reason</th>
      <th scope="col">waiting for</th><th scope="col">moves</th><th scope="col">check</th></tr></thead>
    <tbody>${node.volumes.map((p) => html`<tr data-testid="pair-row" data-volume=${p.volume} data-node=${p.node} data-reason=${p.reason ?? ''} data-side=${p.side ?? ''}>
      <td class="ellipsis" title=${p.volume}><a href=${href.volume(p.volume)}>${shortVolume(p.volume)}</a>
        <div class="pods">${p.pods.map((pod) => html`<span class="pod">${pod.namespace}/${pod.name ?? pod.uid}</span>`)}</div></td>
      <td><${StateLabel} state=${p.state} />${p.desired ? '' : html`<div class="note">not desired</div>`}${p.mounted ? html`<div class="note">mounted</div>` : null}</td>
      <td>${p.reason ? html`<${ReasonChip} reason=${p.reason} side=${p.side} />` : '–'}</td>
      <td><span data-testid="waiting-for">${p.waitingFor ?? ''}</span></td>
      <td>${p.reason ? html`<${Eta} etaMs=${p.etaMs} etaWhy=${p.etaWhy} receivedAt=${node.at} />` : '–'}</td>
      <td class="cmds">${p.pods[0]?.name && p.pods[0].namespace ? html`<${Kubectl} cmd=${kubectl.describePod(p.pods[0].namespace, p.pods[0].name)} />` : null}
        ${p.attachmentName ? html`<${Kubectl} cmd=${kubectl.getVolumeAttachment(p.attachmentName)} />` : null}</td>
    </tr>`)}</tbody></table>
  </section>`;
}
