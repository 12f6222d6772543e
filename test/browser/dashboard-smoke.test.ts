/**
 * Smoke test of the dashboard in a real browser (playwright-core driving Debian's Chromium, no
 * browser download): the page loads from the server alone under its CSP, its tiles equal the API,
 * the login exchanges the token for an HttpOnly cookie without putting it in a URL, and the node
 * list stays a window of rows. CHROMIUM_PATH overrides /usr/bin/chromium; without a Chromium the
 * suite fails and says how to install one (browser-harness.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { listenServer } from '../../src/http/server.js';
import { createFleet, type Fleet } from '../http/fleet-fixture.js';
import { launchBrowser } from './browser-harness.js';

const TOKEN = 'smoke-token-value';
const NODES = 1500;

async function serve(httpToken?: string): Promise<{ fleet: Fleet; url: string }> {
  const fleet = createFleet({ listenHost: '127.0.0.1', httpToken });
  for (let i = 0; i < NODES; i++) {
    const node = fleet.node(`node-${String(i).padStart(5, '0')}`);
    if (i < 40) {
      const v = fleet.volume(`vol-${i}`);
      fleet.want(v, node, `uid-${i}`);
      if (i % 4 !== 0) fleet.attach(v, node);
    }
  }
  return { fleet, url: await listenServer(fleet.app, '127.0.0.1:0') };
}

/** A page that records what a test must never see: script errors and requests to another origin. */
async function open(browser: Browser, origin: string): Promise<{ page: Page; pageErrors: string[]; urls: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const pageErrors: string[] = [];
  const urls: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('request', (r) => urls.push(r.url()));
  return { page, pageErrors, urls };
}

describe('dashboard in Chromium', { timeout: 120_000 }, () => {
  let browser: Browser;
  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => { await browser?.close(); });

  it('serves the summary from its own origin under the CSP, with tiles equal to the API', async () => {
    const { fleet, url } = await serve();
    const { page, pageErrors, urls } = await open(browser, url);
    try {
      const res = await page.goto(`${url}/`);
      assert.match(res!.headers()['content-security-policy'] ?? '', /default-src 'self'/);
      const summary = await (await fetch(`${url}/api/v1/summary`)).json() as { pairs: { desired: number; attached: number } };
      await page.waitForSelector('[data-testid=tile-desired]');
      assert.equal(await page.getAttribute('[data-testid=tile-desired]', 'data-value'), String(summary.pairs.desired));
      assert.equal(await page.getAttribute('[data-testid=tile-attached]', 'data-value'), String(summary.pairs.attached));
      assert.equal(await page.textContent('[data-testid=tile-attached] .value'), String(summary.pairs.attached));
      assert.ok(await page.locator('[data-testid=convergence-chart]').count() === 1);
      assert.match(await page.textContent('[data-testid=live-indicator]') ?? '', /live|stale/);
      assert.deepEqual(urls.filter((u) => !u.startsWith(`${url}/`)), [], 'requests to another origin');
      assert.deepEqual(pageErrors, []);
      await page.screenshot({ path: `${process.env.SCREENSHOT_DIR ?? '/tmp'}/dashboard-smoke-summary.png` });
    } finally {
      await page.close();
      await fleet.close();
    }
  });

  it('logs in with the token (HttpOnly cookie, token in no URL) and keeps the node list a window', async () => {
    const { fleet, url } = await serve(TOKEN);
    const { page, pageErrors, urls } = await open(browser, url);
    try {
      await page.goto(`${url}/#/nodes`);
      await page.waitForSelector('form[data-testid=login]');
      await page.fill('form[data-testid=login] input[name=token]', TOKEN);
      await page.press('form[data-testid=login] input[name=token]', 'Enter');
      await page.waitForSelector('tr[data-testid=node-row]');
      const cookies = await page.context().cookies();
      assert.deepEqual(cookies.map((c) => [c.name, c.httpOnly, c.sameSite, c.path]), [['fa_session', true, 'Strict', '/']]);
      assert.ok(!urls.some((u) => u.includes(TOKEN)), 'token in a URL');

      const last = `node-${String(NODES - 1).padStart(5, '0')}`;
      for (let i = 0; i < 40 && (await page.locator(`tr[data-testid=node-row][data-node="${last}"]`).count()) === 0; i++) {
        await page.$eval('.vt-scroll', (el) => { el.scrollTop = el.scrollHeight; });
        await page.waitForTimeout(250);
      }
      assert.equal(await page.locator(`tr[data-testid=node-row][data-node="${last}"]`).count(), 1);
      assert.ok(await page.locator('tr').count() <= 500, 'rows in the DOM');
      assert.deepEqual(pageErrors, []);
    } finally {
      await page.close();
      await fleet.close();
    }
  });
});
