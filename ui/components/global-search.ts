/**
 * The header's search box: a node, volume, claim or pod name prefix, resolved by the server to a
 * node or volume page. One hit opens it; several are listed; none falls back to the node list.
 */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { api, type SearchHit } from '../api.js';
import { href, navigate } from '../router.js';

function target(h: SearchHit): string {
  if (h.kind === 'node') return href.node(h.name);
  if (h.kind === 'volume') return href.volume(h.name);
  if (h.volume) return href.volume(h.volume);
  return h.node ? href.node(h.node) : href.nodes({ q: h.name });
}

export function GlobalSearch() {
  const [hits, setHits] = useState<SearchHit[]>([]);
  const submit = async (e: Event) => {
    e.preventDefault();
    const q = ((e.currentTarget as HTMLFormElement).elements.namedItem('q') as HTMLInputElement).value.trim();
    if (q === '') return;
    const found = await api.search(q).catch(() => [] as SearchHit[]);
    if (found.length === 1) {
      setHits([]);
      navigate(target(found[0]));
    } else if (found.length === 0) {
      setHits([]);
      navigate(href.nodes({ q }));
    } else setHits(found);
  };
  return html`<form class="global-search" role="search" onSubmit=${submit}>
    <input data-testid="search" type="search" name="q" placeholder="node, volume, claim, pod…  ( / )" aria-label="search" />
    ${hits.length > 0 ? html`<ul class="hits">${hits.map((h) => html`<li><a href=${target(h)} onClick=${() => setHits([])}><span class="kind">${h.kind}</span> ${h.name}</a></li>`)}</ul>` : null}
  </form>`;
}
