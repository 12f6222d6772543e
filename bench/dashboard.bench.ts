// The web dashboard's budgets: `npm run bench:dashboard` [-- --nodes 100000 --out FILE].
// In `npm run bench:full`.
//
// Subject: the real controller with its inspection API and dashboard (startControllerWithApi, one
// plan worker) converged on a simulated fleet of N nodes × 10 pods (each pod with its own PVC, PV
// and VolumeAttachment; the simulator in a child process with its attacher and kubelets, as
// bench:http and bench:heap run it), then `--churn` pod changes per second; Debian's Chromium
// (playwright-core, CHROMIUM_PATH or /usr/bin/chromium) opens the dashboard. Reports:
//   - first_load_kb: bytes on the wire (CDP Network: loadingFinished encodedDataLength of every
//     finished response, plus the event stream's dataReceived encodedDataLength) for a first load
//     of `#/` in a fresh browser context, until the tiles and the chart are drawn;
//   - stream_kb_per_s: the event stream's bytes on the wire per second with the summary open, over
//     the open phases below (`--phase` × `--rounds`, ≥ a minute by default) of churn;
//   - max_dom_rows: the most `tr` elements in the page while scrolling `#/nodes` to its last node
//     and `#/not-converged` to its end;
//   - loop_p99_ratio: the reconcile pass p99 with the dashboard open ÷ without, in one run: phases
//     alternate (closed, open) `--rounds` times under the same churn; every pass of a phase is
//     recorded from the reconciler's pass-time window (what `/api/v1/summary` loop.pass.p99Ms
//     reads; its 1,024-pass window would straddle phases, so the passes are teed per phase), and
//     `/api/v1/summary`'s own figure at each phase's end is kept in the result too.
// Writes bench/results/dashboard.json unless --out.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { freemem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandLine } from './lib/args.js';
import { forkTs, nextMessage, runChild, runMain, SEMI_SPACE_FLAG, type Child } from './lib/children.js';
import { phaseBar } from './lib/progress.js';
import type { SimChildMessage } from './lib/sim-child.js';
import { percentile, round } from './lib/stats.js';

const PODS_PER_NODE = 10;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/* eslint-disable @typescript-eslint/no-explicit-any */

interface Options { nodes: number; churn: number; phaseS: number; rounds: number; settleS: number; timeoutS: number }

interface Result {
  bench: 'dashboard';
  command: string;
  date: string;
  nodes: number;
  pods: number;
  churn_per_s: number;
  converge_s: number;
  first_load_kb: number;
  first_load_requests: number;
  stream_kb_per_s: number;
  stream_messages_per_s: number;
  max_dom_rows: number;
  loop_p99_ratio: number | null;
  loop: {
    closed: { passes: number; p50_ms: number | null; p99_ms: number | null; summary_p99_ms: Array<number | null> };
    open: { passes: number; p50_ms: number | null; p99_ms: number | null; summary_p99_ms: Array<number | null> };
    phase_s: number;
    rounds: number;
  };
  budgets: { first_load_kb: 300; stream_kb_per_s: 5; max_dom_rows: 500; loop_p99_ratio: 1.2 };
}

async function measure(o: Options, command: string): Promise<Result> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  const { chromium } = await import('playwright-core');
  const { startControllerWithApi } = await import('../src/manager/run-controller.js');
  const { SIMULATOR_CLIENT_SIZING } = await import('../src/sim/server/index.js');
  const dir = mkdtempSync(join(tmpdir(), 'fa-dashboard-bench-'));
  const kubeconfig = join(dir, 'kubeconfig');
  let sim: Child | undefined;
  let running: Awaited<ReturnType<typeof startControllerWithApi>> | undefined;
  let browser: Awaited<ReturnType<typeof chromium.launch>> | undefined;
  try {
    sim = forkTs(new URL('./lib/sim-child.ts', import.meta.url).pathname, [`--max-old-space-size=${o.nodes >= 50_000 ? 8192 : 4096}`, SEMI_SPACE_FLAG], {
      FA_SIM_CHILD: JSON.stringify({ nodes: o.nodes, podsPerNode: PODS_PER_NODE, seed: 1, kubeconfigOut: kubeconfig }),
      LOG_LEVEL: 'warn',
    });
    const fleetBar = phaseBar('fleet', o.nodes, 'nodes');
    sim.process.on('message', (m: SimChildMessage) => m.type === 'progress' && fleetBar.update(m.done));
    await nextMessage<SimChildMessage>(sim, (m) => m.type === 'ready', o.timeoutS * 1000);
    fleetBar.done('ready');

    const t0 = performance.now();
    running = await startControllerWithApi({
      kubeconfig: { path: kubeconfig }, listen: '127.0.0.1:0', leaderElect: false, kubeApiQps: 20_000, kubeApiBurst: 20_000,
      kubeApiMaxInFlight: SIMULATOR_CLIENT_SIZING.kubeApiMaxInFlight, workers: 1,
    });
    const { ctl, url } = running;
    const expected = o.nodes * PODS_PER_NODE;
    const bar = phaseBar('converge', expected, 'pairs');
    for (;;) {
      const c = ctl.state.counts();
      bar.update(Math.min(c.attached, c.reportedAttached), `desired ${c.desiredPairs}  attached ${c.attached}  reported ${c.reportedAttached}`);
      if (c.desiredPairs === expected && c.attached === expected && c.reportedAttached === expected) break;
      if (performance.now() - t0 > o.timeoutS * 1000) throw new Error(`not converged within ${o.timeoutS} s: ${JSON.stringify(c)}`);
      if (freemem() < 1024 * 2 ** 20) throw new Error(`not converged: free memory below 1 GB: ${JSON.stringify(c)}`);
      await sleep(500);
    }
    const convergeS = round((performance.now() - t0) / 1000)!;
    bar.done(`${convergeS} s`);

    if (o.churn > 0) {
      sim.process.send({ type: 'churn', rate: o.churn });
      await nextMessage<SimChildMessage>(sim, (x) => x.type === 'churn-started', 10 * 60_000);
      await sleep(o.settleS * 1000);
    }

    browser = await chromium.launch({
      executablePath: CHROMIUM, headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });

    // First load of #/ in a fresh context: every response's bytes on the wire.
    const first = await (async () => {
      const context = await browser!.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      let finished = 0;
      let requests = 0;
      let streamBytes = 0;
      const streamIds = new Set<string>();
      cdp.on('Network.requestWillBeSent', (e) => { requests++; if (e.request.url.includes('/api/v1/stream')) streamIds.add(e.requestId); });
      cdp.on('Network.loadingFinished', (e) => { finished += e.encodedDataLength; });
      cdp.on('Network.dataReceived', (e) => { if (streamIds.has(e.requestId)) streamBytes += e.encodedDataLength; });
      await page.goto(`${url}/#/`);
      await page.waitForSelector('[data-testid=tile-notConverged]', { timeout: 120_000 });
      await page.waitForFunction(() => Number((globalThis as any).document.querySelector('[data-testid=convergence-chart]')?.getAttribute('data-points') ?? 0) > 0, undefined, { timeout: 120_000 });
      await page.waitForFunction(() => (globalThis as any).__faStream?.messages > 0, undefined, { timeout: 120_000 });
      await sleep(500);
      const kb = (finished + streamBytes) / 1024;
      await context.close();
      return { kb: round(kb)!, requests };
    })();
    console.error(`first load of #/: ${first.kb} KB in ${first.requests} requests`);

    // Alternating phases: no page, then the summary open, `rounds` times; passes teed per phase.
    const passWindow = ctl.reconciler.passTime;
    const record = passWindow.record.bind(passWindow);
    let sink: number[] | undefined;
    passWindow.record = (ms) => {
      record(ms);
      sink?.push(ms);
    };
    const closed: number[] = [];
    const open: number[] = [];
    const summaryP99 = { closed: [] as Array<number | null>, open: [] as Array<number | null> };
    const summaryLoopP99 = async () => {
      const s = await (await fetch(`${url}/api/v1/summary`)).json() as { loop?: { pass?: { p99Ms?: number } } };
      return s.loop?.pass?.p99Ms ?? null;
    };
    let streamBytes = 0;
    let streamMessages = 0;
    let openMs = 0;
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    for (let r = 0; r < o.rounds; r++) {
      sink = closed;
      await sleep(o.phaseS * 1000);
      sink = undefined;
      summaryP99.closed.push(await summaryLoopP99());

      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      const ids = new Set<string>();
      let bytes = 0;
      cdp.on('Network.requestWillBeSent', (e) => { if (e.request.url.includes('/api/v1/stream')) ids.add(e.requestId); });
      cdp.on('Network.dataReceived', (e) => { if (ids.has(e.requestId)) bytes += e.encodedDataLength; });
      await page.goto(`${url}/#/`);
      await page.waitForSelector('[data-testid=tile-notConverged]', { timeout: 120_000 });
      await page.waitForFunction(() => (globalThis as any).__faStream?.messages > 0, undefined, { timeout: 120_000 });
      const m0 = await page.evaluate(() => (globalThis as any).__faStream.messages);
      const b0 = bytes;
      const tOpen = performance.now();
      sink = open;
      await sleep(o.phaseS * 1000);
      sink = undefined;
      openMs += performance.now() - tOpen;
      streamBytes += bytes - b0;
      streamMessages += (await page.evaluate(() => (globalThis as any).__faStream.messages)) - m0;
      summaryP99.open.push(await summaryLoopP99());
      await page.close();
      console.error(`round ${r + 1}/${o.rounds}: ${closed.length} passes closed, ${open.length} open`);
    }
    passWindow.record = record;

    // Rows in the DOM while scrolling the node list to its end, then the not-converged list.
    const page = await context.newPage();
    let maxRows = 0;
    const rows = async () => { maxRows = Math.max(maxRows, await page.locator('tr').count()); };
    const scrollToEnd = async (route: string, rowSelector: string) => {
      await page.goto(`${url}/${route}`);
      await page.waitForSelector(rowSelector, { timeout: 120_000 }).catch(() => undefined);
      await rows();
      for (let i = 0; i < 400; i++) {
        const more = await page.evaluate(() => {
          const el = (globalThis as any).document.querySelector('.vt-scroll');
          if (!el) return false;
          const before = el.scrollTop;
          el.scrollTop = Math.min(el.scrollHeight, before + Math.max(el.clientHeight, el.scrollHeight / 50));
          return el.scrollTop > before;
        });
        await sleep(150);
        await rows();
        if (!more) break;
      }
      await sleep(1000); // the last window's fetch
      await rows();
    };
    await scrollToEnd('#/nodes', 'tr[data-testid=node-row]');
    const lastNode = await page.locator('tr[data-testid=node-row]').last().getAttribute('data-node').catch(() => null);
    console.error(`nodes list scrolled to ${lastNode}; rows ≤ ${maxRows}`);
    await scrollToEnd('#/not-converged', 'tr[data-testid=pair-row]');
    await context.close();

    const p = (xs: number[], q: number) => round(percentile(xs, q) ?? null, 2);
    const p99Closed = percentile(closed, 0.99);
    const p99Open = percentile(open, 0.99);
    const openS = openMs / 1000;
    return {
      bench: 'dashboard', command, date: new Date().toISOString(),
      nodes: o.nodes, pods: expected, churn_per_s: o.churn, converge_s: convergeS,
      first_load_kb: first.kb, first_load_requests: first.requests,
      stream_kb_per_s: round(streamBytes / 1024 / openS, 2)!, stream_messages_per_s: round(streamMessages / openS, 2)!,
      max_dom_rows: maxRows,
      loop_p99_ratio: p99Closed && p99Open !== undefined ? round(p99Open / p99Closed, 2) : null,
      loop: {
        closed: { passes: closed.length, p50_ms: p(closed, 0.5), p99_ms: p(closed, 0.99), summary_p99_ms: summaryP99.closed },
        open: { passes: open.length, p50_ms: p(open, 0.5), p99_ms: p(open, 0.99), summary_p99_ms: summaryP99.open },
        phase_s: o.phaseS, rounds: o.rounds,
      },
      budgets: { first_load_kb: 300, stream_kb_per_s: 5, max_dom_rows: 500, loop_p99_ratio: 1.2 },
    };
  } finally {
    await browser?.close();
    if (sim && sim.process.exitCode === null) sim.process.send({ type: 'churn-stop' });
    await running?.stop();
    await sim?.stop(10_000);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const cli = commandLine('bench:dashboard', {
    nodes: { type: 'string', default: '100000', arg: 'N', help: 'fleet size (nodes; 10 pods each)' },
    churn: { type: 'string', default: '100', arg: 'PER_S', help: 'pod changes/s while measured' },
    phase: { type: 'string', default: '15', arg: 'S', help: 'seconds of each phase (dashboard closed, open)' },
    rounds: { type: 'string', default: '4', arg: 'N', help: 'closed/open phase pairs (open time is the stream measurement)' },
    settle: { type: 'string', default: '20', arg: 'S', help: 'seconds of churn before measuring' },
    timeout: { type: 'string', default: '3600', arg: 'S', help: 'give up generating or converging after this long' },
    out: { type: 'string', arg: 'FILE', help: 'results file (default bench/results/dashboard.json)' },
  });
  const [nodes] = cli.ints('nodes');
  const [churn] = cli.ints('churn');
  const [phaseS] = cli.ints('phase');
  const [rounds] = cli.ints('rounds');
  const [settleS] = cli.ints('settle');
  const [timeoutS] = cli.ints('timeout');
  if (!nodes || !phaseS || !rounds || timeoutS === undefined || churn === undefined || settleS === undefined) cli.fail('--nodes, --phase, --rounds: positive integers');
  const o: Options = { nodes, churn, phaseS, rounds, settleS, timeoutS };
  const heapMb = Math.min(20_480, Math.max(4096, Math.ceil(nodes / 2500) * 1024));
  const child = forkTs(fileURLToPath(import.meta.url), [`--max-old-space-size=${heapMb}`, SEMI_SPACE_FLAG], {
    FA_DASHBOARD_BENCH: JSON.stringify({ o, command: cli.command }),
    LOG_LEVEL: 'error',
  });
  child.process.stderr?.pipe(process.stderr);
  const m = await nextMessage<{ type: 'result'; result: Result }>(child, (x) => x.type === 'result', (timeoutS + 1800) * 1000);
  await child.exited;
  console.log(JSON.stringify(m.result, null, 2));
  writeFileSync(cli.values.out ?? fileURLToPath(new URL('./results/dashboard.json', import.meta.url)), `${JSON.stringify(m.result, null, 2)}\n`);
}

const role = process.env.FA_DASHBOARD_BENCH;
if (role) {
  const { o, command } = JSON.parse(role) as { o: Options; command: string };
  runChild(async () => {
    const result = await measure(o, command);
    process.send?.({ type: 'result', result }, () => process.exit(0));
  });
} else runMain(main);
