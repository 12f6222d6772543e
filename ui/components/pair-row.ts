/**
 * One not-converged (volume, node) pair as a table row: side, volume, node, reason code, the
 * API's `waitingFor` sentence verbatim, how long it has waited and when it should move.
 */
import { html } from 'htm/preact';
import type { NotConvergedItem } from '../api.js';
import { serverNow } from '../clock.js';
import { Age, Eta } from './eta.js';
import { ReasonChip, StateLabel } from './state-label.js';
import { href } from '../router.js';

export const PAIR_COLUMNS = [
  { label: 'side', width: '7em' },
  { label: 'volume', width: '15%' },
  { label: 'node', width: '12%' },
  { label: 'reason', width: '15em' },
  { label: 'waiting for', width: 'auto' },
  { label: 'waited', width: '6.5em' },
  { label: 'moves', width: '9em' },
];

export function shortVolume(uniqueName: string): string {
  const caret = uniqueName.lastIndexOf('^');
  return caret >= 0 ? uniqueName.slice(caret + 1) : uniqueName.slice(uniqueName.lastIndexOf('/') + 1);
}

export function PairRow(props: { item: NotConvergedItem; selected: boolean; receivedAt: number; onSelect: () => void }) {
  const p = props.item;
  const cls = [props.selected ? 'selected' : '', p.settled ? 'settled' : ''].join(' ').trim();
  return html`<tr data-testid="pair-row" class=${cls} aria-selected=${props.selected}
      data-volume=${p.volume} data-node=${p.node} data-reason=${p.reason} data-side=${p.side} data-settled=${p.settled ? 'true' : undefined} onClick=${props.onSelect}>
    <td>${p.settled ? html`<${StateLabel} state="settled" />` : html`<${StateLabel} state=${p.side} />`}</td>
    <td class="ellipsis" title=${p.volume}><a href=${href.volume(p.volume)}>${shortVolume(p.volume)}</a></td>
    <td class="ellipsis" title=${p.node}><a href=${href.node(p.node)}>${p.node}</a></td>
    <td><${ReasonChip} reason=${p.reason} side=${p.side} title=${p.rule} /></td>
    <td class="ellipsis" title=${p.lastError ? `${p.waitingFor}\nlast error: ${p.lastError}` : p.waitingFor}><span data-testid="waiting-for">${p.waitingFor}</span></td>
    <td><${Age} since=${p.since} serverNow=${serverNow} /></td>
    <td><${Eta} etaMs=${p.etaMs} etaWhy=${p.etaWhy} receivedAt=${props.receivedAt} /></td>
  </tr>`;
}
