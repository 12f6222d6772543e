/**
 * Shared harness of the browser tests: Debian's Chromium driven by playwright-core (no browser
 * download), the real controller with its inspection API and the simulator on loopback, and a
 * page that records what a test must never see (console errors, script errors, requests off the
 * page's origin).
 *
 * Chromium is required: CHROMIUM_PATH, else /usr/bin/chromium. Without it the suite fails and says
 * how to install it (CI installs Debian's `chromium`); it is never skipped silently.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startSimulator, type Simulator } from '../../src/sim/server/index.js';
import { startControllerWithApi, type RunningController } from '../../src/manager/run-controller.js';
import type { ControllerOptions } from '../../src/manager/controller-options.js';
import { attachVa, controllerDefaults } from '../controller/harness.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const VIEWPORT = { width: 1280, height: 800 };
/** How long a test waits for the page to show a state (a stop for a hung wait, not a timing claim). */
export const UI_WAIT_MS = 30_000;

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`the browser tests need Chromium: none at ${CHROMIUM}. Install Debian's package (apt-get install chromium) or set CHROMIUM_PATH to a Chromium binary.`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

export interface RecordedPage {
  page: Page;
  consoleErrors: string[];
  pageErrors: string[];
  /** Every request URL the page made, in order. */
  urls: string[];
  /** Every API answer the page received: [status, url]. */
  apiResponses: Array<[number, string]>;
  /** No console error (but those `allow` matches), no script error, no request off `origin`. */
  assertClean(allow?: RegExp): void;
  close(): Promise<void>;
}

export async function openPage(browser: Browser, origin: string): Promise<RecordedPage> {
  const context = await browser.newContext({ viewport: VIEWPORT });
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  const pageErrors: string[] = [];
  const urls: string[] = [];
  const apiResponses: Array<[number, string]> = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(`${m.text()} (${m.location().url})`); });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('request', (r) => urls.push(r.url()));
  page.on('response', (r) => { if (new URL(r.url()).pathname.startsWith('/api/')) apiResponses.push([r.status(), r.url()]); });
  return {
    page, consoleErrors, pageErrors, urls, apiResponses,
    assertClean(allow) {
      assert.deepEqual(pageErrors, [], 'script errors on the page');
      assert.deepEqual(consoleErrors.filter((m) => !allow?.test(m)), [], 'console errors on the page');
      const foreign = urls.filter((u) => new URL(u).origin !== origin && !u.startsWith('data:'));
      assert.deepEqual(foreign, [], `requests off the page's origin ${origin}`);
    },
    async close() { await context.close(); },
  };
}

/** Posts the token through the login form and waits for the form to go. */
export async function login(page: Page, token: string): Promise<void> {
  await page.waitForSelector('form[data-testid=login]', { timeout: UI_WAIT_MS });
  await page.fill('form[data-testid=login] input[name=token]', token);
  await page.press('form[data-testid=login] input[name=token]', 'Enter');
  await page.waitForSelector('form[data-testid=login]', { state: 'detached', timeout: UI_WAIT_MS });
}

/** Waits until `fn` (run in the page) returns a truthy value, and returns it. */
export async function until<T>(page: Page, what: string, fn: () => T | Promise<T>, timeoutMs = UI_WAIT_MS): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (page at ${page.url()})`);
    await page.waitForTimeout(200);
  }
}

/** `docs/screenshots/<name>.png` at the fixed viewport, only when FA_SCREENSHOTS=1. */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.FA_SCREENSHOTS !== '1') return;
  const dir = join(new URL('../..', import.meta.url).pathname, 'docs', 'screenshots');
  mkdirSync(dir, { recursive: true });
  await page.setViewportSize(VIEWPORT);
  await page.screenshot({ path: join(dir, `${name}.png`) });
}

export interface LiveFleet {
  sim: Simulator;
  api: RunningController;
  url: string;
  token?: string;
  /** GET a JSON API path with the fleet's credentials. */
  json<T = any>(path: string): Promise<T>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /**
   * Plays the external attacher: every new VolumeAttachment is marked attached, but those whose
   * PV name is in `failing` (set by the test), which get an attachError instead.
   */
  failing: Set<string>;
  /** While true, new VolumeAttachments wait (unanswered) until `release()`. */
  hold: boolean;
  release(): void;
  stop(): Promise<void>;
}

/**
 * An empty simulator (no actors: the test plays the kubelet; the attacher is played here) and the
 * controller with its API on 127.0.0.1, with the integration tests' shortened timers.
 */
export async function startFleet(o: Partial<ControllerOptions> & { httpToken?: string; seed?: (sim: Simulator) => void } = {}): Promise<LiveFleet> {
  const { seed, ...opts } = o;
  const sim = await startSimulator({ bookmarkIntervalMs: 1000 });
  const failing = new Set<string>();
  const held: Array<[string, string]> = [];
  const answer = (name: string, pv: string) => {
    if (sim.store.get('volumeattachments', undefined, name) === undefined) return;
    if (failing.has(pv)) {
      sim.store.mutate('volumeattachments', undefined, name, (x) => {
        x.status = { attached: false, attachError: { message: `injected attach failure of ${pv}`, time: new Date().toISOString() } };
      });
    } else {
      attachVa(sim, name);
    }
  };
  const fleet = { hold: false, failing: failing as Set<string> };
  const unsub = sim.store.subscribe((ev) => {
    if (ev.resource !== 'volumeattachments' || ev.type !== 'ADDED') return;
    const va = ev.object() as unknown as { spec: { source: { persistentVolumeName?: string } } };
    const pv = va.spec.source.persistentVolumeName ?? '';
    if (fleet.hold) held.push([ev.name, pv]);
    else setTimeout(() => answer(ev.name, pv), 50);
  });
  seed?.(sim);
  let api: RunningController;
  try {
    api = await startControllerWithApi({ ...controllerDefaults(sim), listen: '127.0.0.1:0', ...opts });
  } catch (err) {
    unsub();
    await sim.stop();
    throw err;
  }
  const headers: Record<string, string> = o.httpToken ? { authorization: `Bearer ${o.httpToken}` } : {};
  const live: LiveFleet = Object.assign(fleet, {
    sim, api, url: api.url, ...(o.httpToken ? { token: o.httpToken } : {}),
    release() {
      fleet.hold = false;
      for (const [name, pv] of held.splice(0)) answer(name, pv);
    },
    async json(path: string): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
      const res = await fetch(`${api.url}${path}`, { headers });
      assert.equal(res.status, 200, `GET ${path}: ${res.status}`);
      return res.json();
    },
    async stop() {
      unsub();
      try {
        await api.stop();
      } finally {
        await sim.stop();
      }
    },
  });
  return live;
}

/**
 * A TCP relay on 127.0.0.1 in front of `target` (http://host:port): the page's origin when a test
 * must cut the network between the browser and the server. `down()` resets every open connection
 * (an open event stream included) and refuses new ones until `up()`.
 */
export interface Relay { url: string; down(): void; up(): void; close(): Promise<void> }

export async function startRelay(target: string): Promise<Relay> {
  const { hostname, port } = new URL(target);
  const open = new Set<Socket>();
  let isDown = false;
  const server = createServer((client) => {
    if (isDown) { client.resetAndDestroy(); return; }
    const upstream = connect(Number(port), hostname);
    open.add(client);
    open.add(upstream);
    const drop = () => { client.destroy(); upstream.destroy(); open.delete(client); open.delete(upstream); };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${addr.port}`,
    down() {
      isDown = true;
      for (const s of open) s.resetAndDestroy();
      open.clear();
    },
    up() { isDown = false; },
    close() {
      for (const s of open) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
