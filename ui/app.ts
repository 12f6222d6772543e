/**
 * The dashboard's entry: the chrome (navigation, search, live indicator, stale banner), the view
 * of the current hash route, and the login page whenever the API says 401. See docs/dashboard.md.
 */
import 'uplot/dist/uPlot.min.css';
import './app.css';
import { html, render } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, onUnauthorized } from './api.js';
import { GlobalSearch } from './components/global-search.js';
import { LiveIndicator, StaleBanner } from './components/live-indicator.js';
import { installGlobalKeys } from './keyboard.js';
import { href, useRoute, type Route } from './router.js';
import { stream } from './stream.js';
import { ConflictsView } from './views/conflicts-view.js';
import { LoginView } from './views/login-view.js';
import { NodeView } from './views/node-view.js';
import { NodesView } from './views/nodes-view.js';
import { NotConvergedView } from './views/not-converged-view.js';
import { OperationsView } from './views/operations-view.js';
import { SummaryView } from './views/summary-view.js';
import { VolumeView } from './views/volume-view.js';

type Auth = 'checking' | 'login' | 'ok';

const NAV: Array<[Route['view'], string, string]> = [
  ['summary', 'Summary', href.summary()],
  ['not-converged', 'Not converged', href.notConverged()],
  ['conflicts', 'Conflicts', href.conflicts()],
  ['operations', 'Operations', href.operations()],
  ['nodes', 'Nodes', href.nodes()],
];

function CurrentView(props: { route: Route }) {
  const r = props.route;
  switch (r.view) {
    case 'summary': return html`<${SummaryView} route=${r} />`;
    case 'not-converged': return html`<${NotConvergedView} route=${r} />`;
    case 'conflicts': return html`<${ConflictsView} />`;
    case 'operations': return html`<${OperationsView} />`;
    case 'nodes': return html`<${NodesView} route=${r} />`;
    case 'node': return html`<${NodeView} name=${r.name} />`;
    case 'volume': return html`<${VolumeView} name=${r.name} />`;
    default: return html`<p class="error">No such page. <a href=${href.summary()}>Back to the summary</a>.</p>`;
  }
}

function App() {
  const route = useRoute();
  const [auth, setAuth] = useState<Auth>('checking');
  const [tokenRequired, setTokenRequired] = useState(false);
  useEffect(() => {
    onUnauthorized(() => setAuth('login'));
    api.session().then((s) => {
      setTokenRequired(s.tokenRequired);
      setAuth(s.authenticated ? 'ok' : 'login');
    }, () => setAuth('ok'));
  }, []);
  useEffect(() => { if (auth === 'login') stream.stop(); }, [auth]);

  if (auth === 'checking') return html`<p class="loading">Loading…</p>`;
  if (auth === 'login') return html`<${LoginView} onLogin=${() => setAuth('ok')} />`;
  const logout = () => api.logout().finally(() => setAuth('login'));
  const ownSearch = route.view === 'nodes' || route.view === 'not-converged';
  return html`<header class="top">
      <a class="brand" href=${href.summary()}>fleet-attach</a>
      <nav aria-label="views">${NAV.map(([view, label, link]) =>
        html`<a href=${link} aria-current=${route.view === view ? 'page' : undefined}>${label}</a>`)}</nav>
      ${ownSearch ? null : html`<${GlobalSearch} />`}
      <${LiveIndicator} />
      ${tokenRequired ? html`<button type="button" class="logout" onClick=${logout}>Log out</button>` : null}
    </header>
    <${StaleBanner} />
    <main><${CurrentView} route=${route} /></main>
    <footer class="keys">Keys: <kbd>/</kbd> search · <kbd>j</kbd>/<kbd>k</kbd> move · <kbd>Enter</kbd> open</footer>`;
}

installGlobalKeys();
render(html`<${App} />`, document.getElementById('app')!);
