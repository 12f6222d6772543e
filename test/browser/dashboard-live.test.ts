/**
 * The dashboard in Chromium against the real controller and the simulator on loopback (the test
 * plays the kubelet, browser-harness.ts the external attacher), each test asserting what a person
 * would see, by the data-testid hooks of docs/dashboard.md: the page waits for a DOM state (with a
 * timeout that only stops a hung wait), never for a time. Every test also checks that the page
 * logged no error and made no request off its origin. FA_SCREENSHOTS=1 writes the main views to
 * docs/screenshots/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createVolumeAndPod, node, pod, setNodeReady, setVolumesInUse, uniqueName, vaExists, vaName, volumesAttached, waitFor } from '../controller/harness.js';
import { UI_WAIT_MS, launchBrowser, login, openPage, screenshot, startFleet, startRelay, until } from './browser-harness.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** What each tile shows, from an `/api/v1/dashboard` answer (docs/dashboard.md's tile keys). */
function tilesOf(d: any): Record<string, string> {
  const t = d.tiles;
  return {
    nodes: String(t.nodes.total), nodesNotReady: String(t.nodes.notReady), desired: String(t.desiredPairs), attached: String(t.attached),
    notConverged: String(t.notConverged.total), conflicts: String(t.conflicts), opsRunning: String(t.operations.running),
    opsBackoff: String(t.operations.backoff), forcedDetaches1h: String(t.forcedDetachesLastHour.timeout + t.forcedDetachesLastHour.outOfService),
  };
}

async function tilesOnScreen(page: Page): Promise<Record<string, string>> {
  return page.$$eval('[data-testid^=tile-]', (els) => Object.fromEntries(els.map((e) => [e.getAttribute('data-testid')!.slice(5), e.getAttribute('data-value') ?? ''])));
}

const tile = (page: Page, key: string) => page.getAttribute(`[data-testid=tile-${key}]`, 'data-value');

describe('dashboard against the live controller', { timeout: 240_000 }, () => {
  let browser: Browser;
  before(async () => { browser = await launchBrowser(); });
  after(async () => { await browser?.close(); });

  it('a cold start falls to zero not-converged; tiles equal /api/v1/dashboard, the chart /api/v1/history', async () => {
    const NODES = 8;
    const PER_NODE = 3;
    const fleet = await startFleet({
      seed: (sim) => {
        for (let i = 0; i < NODES; i++) sim.store.create('nodes', node(`node-${i}`));
        for (let i = 0; i < NODES * PER_NODE; i++) createVolumeAndPod(sim.store, 'shop', `cold-${i}`, { nodeName: `node-${i % NODES}`, podName: `web-${i}` });
      },
    });
    // The attacher answers nothing until the page has shown the fleet not converged.
    fleet.hold = true;
    const rec = await openPage(browser, fleet.url);
    const { page } = rec;
    try {
      await page.goto(`${fleet.url}/#/`);
      await page.waitForSelector('[data-testid=tile-notConverged]', { timeout: UI_WAIT_MS });
      await until(page, 'not-converged pairs on the tile', async () => Number(await tile(page, 'notConverged')) > 0);
      assert.equal(await tile(page, 'nodes'), String(NODES));
      fleet.release();
      await until(page, 'the tile to fall to zero not-converged', async () => (await tile(page, 'notConverged')) === '0' && (await tile(page, 'attached')) === String(NODES * PER_NODE));
      assert.equal(await page.textContent('[data-testid=tile-notConverged] .value'), '0', 'the number a person reads');

      // Settled: every tile equals the API (read until they agree, then compared whole).
      let api: Record<string, string> = {};
      let screen: Record<string, string> = {};
      await until(page, 'tiles equal to the API', async () => {
        api = tilesOf(await fleet.json('/api/v1/dashboard'));
        screen = await tilesOnScreen(page);
        return JSON.stringify(api) === JSON.stringify(screen);
      }, 10_000).catch(() => undefined);
      assert.deepEqual(screen, api, 'tiles on screen vs /api/v1/dashboard');
      assert.deepEqual({ desired: api.desired, attached: api.attached, notConverged: api.notConverged }, { desired: '24', attached: '24', notConverged: '0' });

      // The chart's newest point is the history's newest sample.
      const chart = '[data-testid=convergence-chart]';
      const lastOf = async () => {
        const h = await fleet.json('/api/v1/history?range=15m');
        const last = (k: string) => String(h.series[k].at(-1));
        const onScreen = await page.$eval(chart, (e) => ({
          desired: e.getAttribute('data-last-desired'), attached: e.getAttribute('data-last-attached'), notConverged: e.getAttribute('data-last-not-converged'),
        }));
        return { api: { desired: last('desired'), attached: last('attached'), notConverged: last('notConverged') }, onScreen, points: Number(await page.getAttribute(chart, 'data-points')), apiPoints: h.t.length };
      };
      let c = await lastOf();
      await until(page, 'the chart to show the settled fleet', async () => {
        c = await lastOf();
        return JSON.stringify(c.api) === JSON.stringify(c.onScreen) && c.onScreen.notConverged === '0';
      }).catch(() => undefined);
      assert.deepEqual(c.onScreen, c.api, 'chart vs /api/v1/history');
      assert.deepEqual(c.onScreen, { desired: '24', attached: '24', notConverged: '0' });
      assert.ok(c.points >= 2 && c.apiPoints >= 2, `chart points ${c.points}, history points ${c.apiPoints}`);
      // The history saw the fleet not converged before it settled.
      const h = await fleet.json('/api/v1/history?range=15m');
      assert.ok(Math.max(...h.series.notConverged) > 0, 'history shows the cold start');
      await screenshot(page, 'summary');
      rec.assertClean();
    } finally {
      await rec.close();
      await fleet.stop();
    }
  });

  it('a ReadWriteOnce volume moving between nodes shows as a conflict with both sides, then clears', async () => {
    const fleet = await startFleet({
      seed: (sim) => {
        sim.store.create('nodes', node('node-a'));
        sim.store.create('nodes', node('node-b'));
        createVolumeAndPod(sim.store, 'shop', 'rwo1', { nodeName: 'node-a', podName: 'db-0' });
      },
    });
    const { sim } = fleet;
    const u = uniqueName('rwo1');
    const rec = await openPage(browser, fleet.url);
    const { page } = rec;
    try {
      await waitFor('rwo1 attached to node-a', () => volumesAttached(sim, 'node-a').includes(u));
      setVolumesInUse(sim, 'node-a', [u]);
      // The pod moves: gone from node-a (still mounted there), a new one on node-b.
      sim.store.delete('pods', 'shop', 'db-0', { gracePeriodSeconds: 0 });
      sim.store.create('pods', pod('shop', 'db-0-b', 'node-b', ['pvc-rwo1']));

      await page.goto(`${fleet.url}/#/conflicts`);
      const row = `tr[data-testid=conflict-row][data-volume="${u}"]`;
      await page.waitForSelector(row, { timeout: UI_WAIT_MS });
      assert.equal(await page.getAttribute(row, 'data-node'), 'node-b', 'the waiting side');
      assert.equal(await page.getAttribute(row, 'data-holder'), 'node-a', 'the holder side');
      const api = await fleet.json('/api/v1/conflicts');
      const item = api.items.find((i: any) => i.volume === u);
      assert.ok(item, 'the API has the conflict');
      assert.equal(await page.getAttribute(row, 'data-class'), item.class);
      assert.deepEqual([item.node, item.attachedTo], ['node-b', ['node-a']]);
      assert.match(await page.textContent(`${row} [data-testid=waiting-for]`) ?? '', /node-a/);
      await screenshot(page, 'conflicts');

      // The volume page: both pairs and the timeline with the Multi-Attach block.
      await page.goto(`${fleet.url}/#/volumes/${encodeURIComponent(u)}`);
      await page.waitForSelector('[data-testid=timeline-entry][data-kind=multi-attach-blocked]', { timeout: UI_WAIT_MS });
      await page.waitForSelector(`tr[data-testid=pair-row][data-node=node-b][data-reason=multi-attach]`, { timeout: UI_WAIT_MS });
      await page.waitForSelector(`tr[data-testid=pair-row][data-node=node-a][data-reason=mounted-node-healthy]`, { timeout: UI_WAIT_MS });
      const kinds = await page.$$eval('[data-testid=timeline-entry]', (els) => els.map((e) => e.getAttribute('data-kind')));
      const tl = await fleet.json(`/api/v1/volumes/${encodeURIComponent(u)}/timeline`);
      assert.deepEqual(kinds, tl.items.map((i: any) => i.kind), 'timeline on screen vs the API');
      await screenshot(page, 'volume');

      // The kubelet unmounts on node-a: detach there, attach on node-b, the conflict clears.
      setVolumesInUse(sim, 'node-a', []);
      await page.goto(`${fleet.url}/#/conflicts`);
      await page.waitForSelector(row, { state: 'detached', timeout: UI_WAIT_MS });
      await waitFor('rwo1 attached to node-b', () => volumesAttached(sim, 'node-b').includes(u));
      await page.goto(`${fleet.url}/#/volumes/${encodeURIComponent(u)}`);
      await page.waitForSelector('[data-testid=timeline-entry][data-kind=attach-succeeded] >> nth=1', { timeout: UI_WAIT_MS });
      assert.equal((await fleet.json('/api/v1/conflicts')).items.length, 0);
      rec.assertClean();
    } finally {
      await rec.close();
      await fleet.stop();
    }
  });

  it("a failed node's mounted volume shows its force-detach countdown, then the forced detach clears it", async () => {
    const MAX_WAIT = 20_000;
    const fleet = await startFleet({
      maxWaitForUnmountMs: MAX_WAIT,
      seed: (sim) => {
        sim.store.create('nodes', node('node-c'));
        createVolumeAndPod(sim.store, 'shop', 'dead1', { nodeName: 'node-c', podName: 'api-0' });
      },
    });
    const { sim } = fleet;
    const u = uniqueName('dead1');
    const rec = await openPage(browser, fleet.url);
    const { page } = rec;
    try {
      await waitFor('dead1 attached to node-c', () => volumesAttached(sim, 'node-c').includes(u));
      setVolumesInUse(sim, 'node-c', [u]);
      setNodeReady(sim, 'node-c', false);
      sim.store.delete('pods', 'shop', 'api-0', { gracePeriodSeconds: 0 });

      await page.goto(`${fleet.url}/#/not-converged?side=detach`);
      const row = `tr[data-testid=pair-row][data-volume="${u}"][data-node=node-c][data-side=detach][data-reason=mounted-node-unhealthy]`;
      await page.waitForSelector(`${row} [data-testid=eta][data-eta-ms]`, { timeout: UI_WAIT_MS });
      const etaMs = Number(await page.getAttribute(`${row} [data-testid=eta]`, 'data-eta-ms'));
      assert.ok(etaMs > 0 && etaMs <= MAX_WAIT, `force-detach ETA ${etaMs} ms within the max wait ${MAX_WAIT} ms`);
      assert.match(await page.textContent(`${row} [data-testid=eta]`) ?? '', /^in \S+|due now/, 'a countdown a person reads');
      const api = await fleet.json('/api/v1/not-converged?side=detach');
      const item = api.items.find((i: any) => i.volume === u && i.node === 'node-c');
      assert.equal(item?.reason, 'mounted-node-unhealthy', 'the API gives the same reason');
      // The same sentence (its countdown may have ticked between the two reads).
      const untimed = (t: string | null) => (t ?? '').replace(/\d+(m\d+)?s/g, '…');
      assert.equal(untimed(await page.textContent(`${row} [data-testid=waiting-for]`)), untimed(item.waitingFor));
      await screenshot(page, 'not-converged');

      await page.goto(`${fleet.url}/#/nodes/node-c`);
      const nodeRow = `tr[data-testid=pair-row][data-volume="${u}"][data-reason=mounted-node-unhealthy]`;
      await page.waitForSelector(`${nodeRow} [data-testid=eta][data-eta-ms]`, { timeout: UI_WAIT_MS });
      await screenshot(page, 'node');

      // The timer expires: forced detach, the pair converges, the tile counts it.
      await page.goto(`${fleet.url}/#/not-converged?side=detach`);
      await waitFor('the forced detach', () => !vaExists(sim, vaName('dead1', 'node-c')), MAX_WAIT + 20_000);
      await page.waitForSelector(row, { state: 'detached', timeout: UI_WAIT_MS });
      await page.goto(`${fleet.url}/#/`);
      await until(page, 'the forced detach on the tile', async () => (await tile(page, 'forcedDetaches1h')) === '1');
      rec.assertClean();
    } finally {
      await rec.close();
      await fleet.stop();
    }
  });

  it('an attach error shows its backoff growing in the operations view', async () => {
    const fleet = await startFleet({ seed: (sim) => sim.store.create('nodes', node('node-a')) });
    fleet.failing.add('pv-bad1');
    const u = uniqueName('bad1');
    const rec = await openPage(browser, fleet.url);
    const { page } = rec;
    try {
      await page.goto(`${fleet.url}/#/operations`);
      await page.waitForSelector('h1', { timeout: UI_WAIT_MS });
      createVolumeAndPod(fleet.sim.store, 'shop', 'bad1', { nodeName: 'node-a', podName: 'worker-0' });
      const row = `tr[data-testid=op-row][data-volume="${u}"][data-node=node-a][data-op=attach][data-state=backoff]`;
      const attemptOnScreen = async () => Number((await page.textContent(`${row} td:nth-child(5)`, { timeout: UI_WAIT_MS }))?.trim());
      const apiItem = async () => (await fleet.json('/api/v1/operations?state=backoff')).items.find((i: any) => i.volume === u);

      await page.waitForSelector(row, { timeout: UI_WAIT_MS });
      const first = { attempt: await attemptOnScreen(), retryInMs: Number(await page.getAttribute(row, 'data-retry-in-ms')) };
      const firstApi = await apiItem();
      assert.ok(first.attempt >= 1, `attempt on screen ${first.attempt}`);
      assert.ok(first.retryInMs >= 0, 'retry-in on screen');
      await page.waitForSelector('[data-testid=top-error]', { timeout: UI_WAIT_MS });
      assert.match(await page.textContent('[data-testid=top-error]') ?? '', /injected attach failure/);
      await screenshot(page, 'operations');

      // A later failure: a later attempt on screen, a longer backoff in the API.
      const second = await until(page, 'a later attempt on screen', async () => {
        const a = await attemptOnScreen().catch(() => 0);
        return a > first.attempt + 1 ? a : undefined;
      }, 45_000);
      const secondApi = await until(page, 'the API to agree', async () => {
        const i = await apiItem();
        return i && i.attempt === second ? i : undefined;
      });
      assert.ok(secondApi.durationMs > (firstApi?.durationMs ?? 0), `backoff grew: ${firstApi?.durationMs} → ${secondApi.durationMs} ms`);
      assert.ok(Number(await page.getAttribute(row, 'data-retry-in-ms')) <= secondApi.durationMs);
      assert.equal(await page.locator('tr[data-testid=op-row][data-state=backoff]').count(), 1, 'one operation backing off');

      // The attacher recovers: the row goes.
      fleet.failing.delete('pv-bad1');
      fleet.sim.store.mutate('volumeattachments', undefined, vaName('bad1', 'node-a'), (x) => { x.status = { attached: true }; });
      await page.waitForSelector(row, { state: 'detached', timeout: 60_000 });
      rec.assertClean();
    } finally {
      await rec.close();
      await fleet.stop();
    }
  });

  it('a dropped stream shows the stale banner and recovers', async () => {
    const fleet = await startFleet({ seed: (sim) => sim.store.create('nodes', node('node-a')) });
    // The page talks to the server through a relay that the test can cut.
    const relay = await startRelay(fleet.url);
    const rec = await openPage(browser, relay.url);
    const { page } = rec;
    try {
      await page.goto(`${relay.url}/#/`);
      await page.waitForSelector('[data-testid=tile-nodes]', { timeout: UI_WAIT_MS });
      await until(page, 'the live indicator', async () => /live/.test(await page.textContent('[data-testid=live-indicator]') ?? ''));
      assert.equal(await page.locator('[data-testid=stale-banner]').count(), 0, 'no banner while live');
      const beforeOutage = rec.consoleErrors.length;

      // The connection drops and reconnects are refused: the page says its data is stale.
      relay.down();
      await page.waitForSelector('[data-testid=stale-banner]', { timeout: UI_WAIT_MS });
      assert.match(await page.textContent('[data-testid=live-indicator]') ?? '', /stale/);
      assert.equal(await page.evaluate(() => (globalThis as any).__faStream.connected), false);

      // Meanwhile the fleet changes; the network comes back, the page reconnects and shows it.
      fleet.sim.store.create('nodes', node('node-b'));
      relay.up();
      await page.waitForSelector('[data-testid=stale-banner]', { state: 'detached', timeout: UI_WAIT_MS });
      await until(page, 'live again', async () => /live/.test(await page.textContent('[data-testid=live-indicator]') ?? ''));
      await until(page, 'the new node on the tile', async () => (await tile(page, 'nodes')) === '2');
      assert.equal(await page.evaluate(() => (globalThis as any).__faStream.connected), true);
      // Only failed loads during the outage may have logged errors.
      const outage = rec.consoleErrors.splice(beforeOutage);
      for (const m of outage) assert.match(m, /net::ERR_|Failed to load resource/, `an error during the outage: ${m}`);
      rec.assertClean();
    } finally {
      await rec.close();
      await relay.close();
      await fleet.stop();
    }
  });

  it('without the token: nothing but the login page; after login the summary, the token in no URL', async () => {
    const TOKEN = 'browser-test-token-9f3c';
    const fleet = await startFleet({ httpToken: TOKEN, seed: (sim) => sim.store.create('nodes', node('private-node-7')) });
    const rec = await openPage(browser, fleet.url);
    const { page } = rec;
    try {
      await page.goto(`${fleet.url}/#/nodes`);
      await page.waitForSelector('form[data-testid=login]', { timeout: UI_WAIT_MS });
      await page.waitForLoadState('networkidle');
      assert.equal(await page.locator('[data-testid^=tile-], tr[data-testid=node-row], tr[data-testid=pair-row]').count(), 0, 'no data on the login page');
      assert.ok(!(await page.content()).includes('private-node-7'), 'no fleet name on the login page');
      // The session probe (`/api/v1/session`) holds no fleet data; every other API answer was a 401.
      const beforeLogin = rec.apiResponses.splice(0).filter(([, u]) => new URL(u).pathname !== '/api/v1/session');
      assert.deepEqual(beforeLogin.filter(([status]) => status !== 401), [], 'no data request succeeded before login');
      assert.equal((await fetch(`${fleet.url}/api/v1/dashboard`)).status, 401, 'the API refuses without credentials');

      await login(page, TOKEN);
      await page.waitForSelector('tr[data-testid=node-row][data-node=private-node-7]', { timeout: UI_WAIT_MS });
      await page.goto(`${fleet.url}/#/`);
      await until(page, 'the summary', async () => (await tile(page, 'nodes')) === '1');
      const cookies = await page.context().cookies();
      assert.deepEqual(cookies.map((c) => [c.httpOnly, c.sameSite]), [[true, 'Strict']], 'an HttpOnly, SameSite=Strict session cookie');
      assert.ok(!rec.urls.some((u) => u.includes(TOKEN) || u.includes(encodeURIComponent(TOKEN))), 'the token in a URL');
      // The 401s before login are the only errors the console may show.
      rec.assertClean(/status of 401/);
    } finally {
      await rec.close();
      await fleet.stop();
    }
  });
});
