#!/usr/bin/env node
// The benchmark figures, from bench/results/*.json, in two places written by the same code:
//   - README.md, between the lines `<!-- bench:begin -->` and `<!-- bench:end -->`: one short
//     table, a line per bench with its key figures and its command (nothing else is touched);
//   - bench/results/summary.md: a section per bench with its tables, the exact command that
//     produced the figures and the charts, and what the last `npm run bench` / `bench:full` ran.
// Only current figures: no dates, machine loads or commit ids. A results file that is missing
// or lacks a field gives "—", never an error.
//
//   node scripts/bench-table.js            rewrite the README block and bench/results/summary.md
//   node scripts/bench-table.js --summary  rewrite bench/results/summary.md only
//   node scripts/bench-table.js --check    exit 1 if the README block is not what the results give
//   node scripts/bench-table.js --print    print the README block
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const README = new URL('README.md', root);
const SUMMARY = new URL('bench/results/summary.md', root);
const BEGIN = '<!-- bench:begin -->';
const END = '<!-- bench:end -->';

function load(name) {
  const url = new URL(`bench/results/${name}.json`, root);
  if (!existsSync(url)) return undefined;
  try {
    return JSON.parse(readFileSync(url, 'utf8'));
  } catch {
    return undefined;
  }
}

const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
/** Integers with thousands separators. */
const int = (v) => (isNum(v) ? Math.round(v).toLocaleString('en-US') : '—');
/** Three significant digits (no exponent), with a unit. */
const sig = (v, unit = '') => (isNum(v) ? `${v >= 1000 ? Math.round(v).toLocaleString('en-US') : +v.toPrecision(3)}${unit}` : '—');
/** 4.4 M, 121k. */
const short = (v) => (!isNum(v) ? '—' : v >= 1e6 ? `${+(v / 1e6).toPrecision(2)} M` : v >= 1e3 ? `${Math.round(v / 1e3)}k` : String(Math.round(v)));
const pct = (v) => (isNum(v) ? `${Math.round(v * 100)}%` : '—');
const nodes = (n) => (isNum(n) ? (n >= 1000 ? `${Math.round(n / 1000)}k` : String(n)) : '—');
const code = (s) => `\`${s}\``;

function table(head, rows) {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** A chart in bench/results/ (summary.md sits beside them), when it exists. */
function chart(file, alt) {
  return existsSync(new URL(`bench/results/${file}`, root)) ? [`![${alt}](${file})`] : [];
}

/**
 * Each bench: `readme` is its key figures in one cell (or undefined without results), `section`
 * the Markdown of summary.md. `script` is the npm script; `command` what produced the figures
 * (`perSize`: each size's row names its own run's command).
 */

function kernel(k) {
  const sizes = k?.sizes ?? [];
  const at = (n) => sizes.find((s) => s.nodes === n) ?? sizes[sizes.length - 1];
  const ten = at(10_000);
  return {
    name: 'Plan kernel',
    script: 'bench:kernel',
    command: k?.command,
    readme: sizes.length === 0 ? undefined
      : `plan p50 (WASM, main thread): ${sizes.map((s) => `${nodes(s.nodes)} nodes ${sig(s.wasm_p50_ms, ' ms')}`).join(', ')}; ${isNum(ten?.speedup_vs_reference) ? `${int(ten.speedup_vs_reference)}× the Map reference at ${nodes(ten.nodes)}` : ''}`,
    section: () => sizes.length === 0 ? undefined : [
      'Nodes × 10 volumes, 1% of pairs differing; plan times are medians (p50) and p99 of repeated plans.',
      '',
      table(['nodes', 'pairs', 'plan p50 (WASM, main thread)', 'p99', 'pool p50', 'Map reference p50', 'read floor p50', 'WASM ÷ floor', 'reference ÷ WASM', 'bytes/pair', 'mutations/s (churn mix)', 'mutations/s (event mix)'], sizes.map((s) => [
        int(s.nodes), int(s.pairs), sig(s.wasm_p50_ms, ' ms'), sig(s.wasm_p99_ms, ' ms'), sig(s.pool_p50_ms, ' ms'), sig(s.reference_p50_ms, ' ms'),
        sig(s.floor_p50_ms, ' ms'), sig(s.wasm_vs_floor), isNum(s.speedup_vs_reference) ? `${int(s.speedup_vs_reference)}×` : '—', sig(s.bytes_per_pair),
        short(s.mutations_per_s), short(s.events_mutations_per_s),
      ])),
      '',
      ...chart('kernel-plan-time.svg', 'plan time against fleet size'),
    ],
  };
}

function listRead(l) {
  const ok = l?.sim && l?.production;
  const p = l?.production;
  return {
    name: 'List page reading',
    script: 'bench:list-read',
    command: l?.command,
    readme: !ok ? undefined
      : `production-shaped pods: ${int(p.ms_per_100k_pods?.inline)} ms per 100k pods parsed whole, ${int(p.ms_per_100k_pods?.sieve)} ms sieved first (${sig(p.to_inline?.sieve)}×); the main thread's share with the worker reader ${int(p.ms_per_100k_pods?.main_side)} ms`,
    section: () => !ok ? undefined : [
      `${int(l.pods)} pods in pages of ${int(l.page_size)}, each reader in turn on one thread; medians of ${int(l.rounds)} rounds in ms per 100k pods (÷ whole: ratio to the whole parse in the same rounds).`,
      '',
      table(['pods', 'bytes/pod', 'kept by the sieve', 'whole: UTF-8 + JSON.parse + projection', 'sieve + JSON.parse + projection (÷ whole)', 'the WebAssembly pass alone', 'worker side, whole', 'worker side, sieved (default)', 'main thread side (÷ whole)'],
        [['simulator', l.sim], ['production-shaped', l.production]].map(([name, r]) => {
          const ms = r.ms_per_100k_pods ?? {};
          const to = r.to_inline ?? {};
          return [name, int(r.bytes_per_pod), pct(r.sieve_kept_fraction), `${int(ms.inline)} ms`, `${int(ms.sieve)} ms (${sig(to.sieve)}×)`, `${int(ms.sieve_pass)} ms`, `${int(ms.worker_side)} ms`, `${int(ms.worker_sieve_side)} ms`, `${int(ms.main_side)} ms (${sig(to.main_side)}×)`];
        })),
      '',
      ...chart('list-read.svg', 'ms per 100k pods per reader'),
    ],
  };
}

function sim(s) {
  const rs = s?.results ?? [];
  const w = s?.writes;
  return {
    name: 'Simulator',
    script: 'bench:sim',
    command: s?.command,
    readme: rs.length === 0 ? undefined
      : rs.map((r) => `${nodes(r.nodes)} nodes: ${int(r.heapBytesPerObject)} heap B/object, paged list ${short(r.listObjectsPerSec)} obj/s, watch ${short(r.watchEventsDeliveredPerSec)} events/s`).join('; '),
    section: () => rs.length === 0 ? undefined : [
      `Nodes × 10 pods, each with its PVC and PV; the simulator alone, in the bench's process.`,
      '',
      table(['nodes', 'objects', 'heap bytes/object', `paged list (${s.pageSize ?? 500}/page)`, `watch fan-out, ${rs[0].watchers ?? 4} watchers`, 'populate'], rs.map((r) => [
        int(r.nodes), short(r.objects), int(r.heapBytesPerObject), `${short(r.listObjectsPerSec)} obj/s`, `${short(r.watchEventsDeliveredPerSec)} events/s`, `${short(r.populateObjectsPerSec)} obj/s`,
      ])),
      ...(w ? ['', `Write path (\`npm run bench:sim -- --writes\`, ${int(w.nodes)} nodes, ${int(w.concurrency)} concurrent requests): VolumeAttachment creates ${short(w.createsPerSec)}/s, node status patches ${short(w.patchesPerSec)}/s, server CPU ${int(w.serverCpuUsPerAttachment)} µs per attachment.`] : []),
    ],
  };
}

function api(a) {
  const row = (name, r) => [name, sig(r?.cpu_us_per_call, ' µs'), sig(r?.server_cpu_us_per_call, ' µs'), int(r?.calls_per_s)];
  return {
    name: 'API calls',
    script: 'bench:api',
    command: a?.command,
    readme: !a?.raw ? undefined
      : `HTTP/2 (default): ${sig(a.raw.cpu_us_per_call, ' µs')} client + ${sig(a.raw.server_cpu_us_per_call, ' µs')} server CPU per call, ${short(a.raw.calls_per_s)} calls/s; HTTP/1.1 costs the client ${sig(a.cpu_per_call_raw_h1_over_raw_h2)}×`,
    section: () => !a?.raw ? undefined : [
      `The four hot calls (VolumeAttachment create, Node status patch, Node GET, VolumeAttachment delete) against the simulator in another process, ${int(a.config?.concurrency)} at a time; CPU per call of this client and of the simulator, medians of ${int(a.config?.reps)} runs of ${int(a.config?.quads ? a.config.quads * 4 : undefined)} calls.`,
      '',
      table(['path', 'client CPU/call', 'server CPU/call', 'calls/s'], [
        row('generated client (HTTP/1.1)', a.generated),
        row('raw, HTTP/1.1 keep-alive', a.raw_h1),
        row('raw, HTTP/2 (default)', a.raw),
      ]),
      '',
      `HTTP/1.1 ÷ HTTP/2: client ${sig(a.cpu_per_call_raw_h1_over_raw_h2)}×, server ${sig(a.server_cpu_per_call_raw_h1_over_raw_h2)}×; generated ÷ raw HTTP/1.1 (client): ${sig(a.cpu_per_call_generated_over_raw_h1)}×.`,
      '',
      ...chart('api-calls.svg', 'CPU per API call'),
    ],
  };
}

function heap(h) {
  const p = h?.per_pod;
  const q = h?.sim_per_object;
  return {
    name: 'Controller heap',
    script: 'bench:heap',
    command: h?.command,
    readme: !p ? undefined : `controller per pod: ${sig(p.objects)} live JS objects, ${int(p.heap_bytes)} JS-heap bytes + ${int(p.native_bytes)} bytes in array buffers` + (q ? `; simulator per stored object: ${sig(q.objects)} objects` : ''),
    section: () => !p ? undefined : [
      `Live state of the converged controller per pod (each with its PVC, PV and VolumeAttachment), and of the simulator per stored object: the slope between ${int(h.runs?.[0]?.nodes)} and ${int(h.runs?.[1]?.nodes)} nodes. JS-heap bytes and objects are what every major GC marks; the array-buffer bytes (byte arenas, typed arrays) it does not.`,
      '',
      table(['process', 'JS-heap bytes', 'array-buffer bytes', 'live objects', 'strings', 'ropes', 'objects', 'arrays', 'other'], [
        ['controller, per pod', int(p.heap_bytes), int(p.native_bytes), sig(p.objects), sig(p.strings), sig(p.ropes), sig(p.objects_plain), sig(p.arrays), sig(p.other)],
        ...(q ? [['simulator, per stored object', int(q.heap_bytes), int(q.native_bytes), sig(q.objects), sig(q.strings), sig(q.ropes), sig(q.objects_plain), sig(q.arrays), sig(q.other)]] : []),
      ]),
    ],
  };
}

function dashboard(d) {
  const ok = (v, max) => (isNum(v) ? (v <= max ? ' ✓' : ' ✗') : '');
  const b = d?.budgets ?? {};
  return {
    name: 'Dashboard',
    script: 'bench:dashboard',
    command: d?.command,
    readme: !d ? undefined : `${nodes(d.nodes)} nodes: first load ${sig(d.first_load_kb, ' KB')}, stream ${sig(d.stream_kb_per_s, ' KB/s')}, ≤ ${int(d.max_dom_rows)} rows in the DOM, loop p99 open/closed ${sig(d.loop_p99_ratio, '×')}`,
    section: () => !d ? undefined : [
      `The real controller with its dashboard on ${int(d.nodes)} nodes × 10 pods under ${int(d.churn_per_s)} pod changes/s, Chromium opening the page. The issue's budgets: first load ≤ ${b.first_load_kb ?? 300} KB on the wire, stream ≤ ${b.stream_kb_per_s ?? 5} KB/s per tab during churn, ≤ ${b.max_dom_rows ?? 500} rows in the DOM, loop p99 with a dashboard open ≤ ${b.loop_p99_ratio ?? 1.2}× without (phases of ${int(d.loop?.phase_s)} s alternating ${int(d.loop?.rounds)} times in one run).`,
      '',
      table(['nodes', 'first load', 'stream', 'stream messages/s', 'max rows in the DOM', 'loop p99 closed', 'loop p99 open', 'ratio'], [[
        int(d.nodes), `${sig(d.first_load_kb, ' KB')}${ok(d.first_load_kb, b.first_load_kb ?? 300)}`, `${sig(d.stream_kb_per_s, ' KB/s')}${ok(d.stream_kb_per_s, b.stream_kb_per_s ?? 5)}`,
        sig(d.stream_messages_per_s), `${int(d.max_dom_rows)}${ok(d.max_dom_rows, b.max_dom_rows ?? 500)}`, sig(d.loop?.closed?.p99_ms, ' ms'), sig(d.loop?.open?.p99_ms, ' ms'),
        `${sig(d.loop_p99_ratio, '×')}${ok(d.loop_p99_ratio, b.loop_p99_ratio ?? 1.2)}`,
      ]]),
    ],
  };
}

function http(h, alloc) {
  const runs = (h?.runs ?? []).filter((r) => !r.failed);
  const failed = (h?.runs ?? []).filter((r) => r.failed);
  const first = runs[0];
  const met = (ok) => (ok === undefined ? '' : ok ? ' ✓' : ' ✗');
  const allocSection = () => !Array.isArray(alloc?.routes) ? [] : [
    '',
    `Heap allocated per request (\`${alloc.command ?? 'npm run bench:http -- --alloc'}\`): the stand-in controller at ${int(alloc.nodes)} nodes with its loop stopped, V8's sampling heap profiler over ${int(alloc.duration_s)} s of autocannon per route.`,
    '',
    table(['route', 'bytes/request', 'largest allocators (bytes/request)'], alloc.routes.map((r) => [r.route, int(r.bytes_per_request), (r.top ?? []).slice(0, 3).map((t) => `${t.fn.split(' ')[0]} ${int(t.bytes_per_request)} B`).join('; ')])),
  ];
  return {
    name: 'Inspection API',
    perSize: true,
    script: 'bench:http',
    command: h?.command,
    readme: !first ? undefined
      : runs.map((r) => `${nodes(r.nodes)} nodes: node lookup ${pct(r.node_vs_ceiling)} of a bare route, p99 ${sig(r.node_p99_ms_saturated, ' ms')} saturated / ${sig(r.node_p99_ms_paced, ' ms')} paced`).join('; '),
    section: () => !first ? undefined : [
      `The real controller reconciling the simulated fleet under churn, its inspection API loaded by autocannon from another process. The issue's targets: node lookup ≥ 50% of a bare route, p99 ≤ 5 ms, loop p99 under load ≤ 1.2× idle. Each size's row comes from its latest run (${runs.map((r) => code(r.command ?? `npm run bench:http -- --nodes ${r.nodes}`)).join(', ')}).`,
      '',
      table(['nodes', 'converged in', 'node lookup ÷ bare route', 'node p99 saturated', 'node p99 paced', 'loop p99 idle / loaded', 'event loop delay p99 / max (loaded)'], runs.map((r) => [
        int(r.nodes), sig(r.converge_s, ' s'), `${pct(r.node_vs_ceiling)}${met(r.targets?.node_vs_ceiling_min_0_5)}`,
        `${sig(r.node_p99_ms_saturated, ' ms')}${met(r.targets?.node_p99_max_5ms_saturated)}`, `${sig(r.node_p99_ms_paced, ' ms')}${met(r.targets?.node_p99_max_5ms_paced)}`,
        `${sig(r.loop_p99_ms_idle, ' ms')} / ${sig(r.loop_p99_ms_loaded, ' ms')}${met(r.targets?.loop_p99_loaded_max_1_2x_idle)}`,
        `${sig(r.event_loop_delay?.loaded?.p99_ms, ' ms')} / ${sig(r.event_loop_delay?.loaded?.max_ms, ' ms')}`,
      ])),
      ...(failed.length ? ['', `Failed: ${failed.map((r) => `${int(r.nodes)} nodes (${String(r.failed).split('\n')[0].slice(0, 100)})`).join('; ')}.`] : []),
      '',
      'Each endpoint alone (medians of the sweeps; server CPU is the whole process: controller, API and plan worker):',
      '',
      table(['nodes', 'endpoint', 'req/s', 'p50', 'p99', 'server CPU/req'], (h.endpoints ?? []).map((e) => [int(e.nodes), e.name, int(e.req_per_s), sig(e.p50_ms, ' ms'), sig(e.p99_ms, ' ms'), sig(e.server_cpu_us_per_req, ' µs')])),
      '',
      ...chart('http-endpoints.svg', 'requests per second per endpoint'),
      ...allocSection(),
    ],
  };
}

function e2e(e) {
  const all = e?.runs ?? [];
  const runs = all.filter((r) => !r.failed);
  const failure = (r) => `failed: ${String(r.failed).split('\n')[0].split(': ')[0].slice(0, 80)}`;
  const converge = (r) => (r.failed ? failure(r) : r.converged === false ? `not in ${int(r.converge_timeout_s ?? 900)} s` : sig(r.converge_s, ' s'));
  // Watch ingest is the burst measured after the churn minute (rows with `watch_ingest`).
  const watch = (r) => (r.watch_ingest === undefined ? '—' : `${short(r.ingest_events_per_s)}/s (${pct(r.ingest_ratio)})`);
  const at = (v, atLeast) => `${atLeast ? '≥ ' : ''}${sig(v)}`;
  const verdict = (ok, what) => `${what}: ${ok === undefined ? 'not measured' : ok ? '**met**' : '**missed**'}`;
  const r50 = all.find((r) => r.nodes === 50_000);
  const r100 = all.find((r) => r.nodes === 100_000);
  const withWatch = runs.filter((r) => r.watch_ingest !== undefined && isNum(r.ingest_ratio));
  const withVa = runs.filter((r) => isNum(r.pod_to_va_p99_ms));
  return {
    name: 'End to end',
    perSize: true,
    script: 'bench:e2e',
    command: e?.command,
    readme: all.length === 0 ? undefined
      : all.map((r) => `${nodes(r.nodes)} nodes: ${r.failed ? 'failed' : `converged in ${sig(r.converge_s, ' s')}, loop p99 ${sig(r.loop_p99_ms, ' ms')}, pod → VA p99 ${sig(r.pod_to_va_p99_ms, ' ms')}`}`).join('; '),
    section: () => all.length === 0 ? undefined : [
      `Simulator and controller as separate processes on the same 2 cores: cold start to every pair attached and reported, then ${int(e.config?.steady_s)} s of churn at ${int(e.config?.churn_per_s)} pod changes/s (loop, plan and new-pod latency are from that minute), then a burst of pod watch events the controller reads at its own pace (watch ingest, with its share of JSON.parse alone on the same lines). Each size's row comes from its latest run (${all.map((r) => code(r.command ?? `npm run bench:e2e -- --nodes ${r.nodes}`)).join(', ')}).`,
      '',
      table(['nodes', 'pods', 'converge', 'controller CPU', 'peak RSS MB', 'initial sync', 'watch ingest (÷ JSON.parse)', 'API writes/s', 'loop p50 / p99 ms', 'plan p50 / p99 ms', 'pod → VA p50 / p99 ms'], all.map((r) => [
        int(r.nodes), int(r.pods), converge(r), sig(r.controller_cpu_s, ' s'), int(r.peak_rss_mb ?? r.peak_rss_mb_at_failure),
        isNum(r.sync_objects_per_s) ? `${short(r.sync_objects_per_s)} obj/s` : '—', watch(r), int(r.api_writes_per_s),
        `${at(r.loop_p50_ms, r.loop_p50_beyond_last_bucket)} / ${at(r.loop_p99_ms, r.loop_p99_beyond_last_bucket)}`, `${sig(r.plan_p50_ms)} / ${sig(r.plan_p99_ms)}`,
        `${at(r.pod_to_va_p50_ms, r.pod_to_va_p50_at_least)} / ${at(r.pod_to_va_p99_ms, r.pod_to_va_p99_at_least)}`,
      ])),
      '',
      `Targets: ${[
        verdict(r50 ? isNum(r50.converge_s) && r50.converge_s <= 120 : undefined, '50k converge ≤ 120 s'),
        verdict(r100 ? isNum(r100.converge_s) && r100.converge_s <= 240 : undefined, '100k ≤ 240 s (stretch)'),
        verdict(r50 ? isNum(r50.loop_p99_ms) && r50.loop_p99_ms <= 20 : undefined, 'loop p99 ≤ 20 ms at 50k under churn'),
        verdict(withVa.length ? withVa.every((r) => r.pod_to_va_p99_ms <= 200) : undefined, 'pod-to-VA p99 ≤ 200 ms'),
        verdict(withWatch.length ? withWatch.every((r) => r.ingest_ratio >= 0.7) : undefined, 'watch ingest ≥ 70% of JSON.parse'),
      ].join('; ')}.`,
      '',
      ...chart('convergence-time.svg', 'convergence time against fleet size'),
      ...chart('loop-time.svg', 'loop time against fleet size'),
      ...chart('ingest-vs-json-parse.svg', 'ingest against JSON.parse'),
    ],
  };
}

/**
 * fleet-attach against upstream kube-controller-manager (bench/results/peer.json): the ratios
 * fleet-attach ÷ upstream of each fleet at the same client qps, and every run in summary.md.
 */
function peer(p) {
  const runs = p?.runs ?? [];
  const FIG = [['converge_s', 'cold start'], ['cpu_s', 'CPU'], ['peak_rss_mb', 'peak RSS'], ['pod_to_va_p50_ms', 'pod→VA p50'], ['pod_to_va_p99_ms', 'pod→VA p99'], ['detach_all_s', 'detach all'], ['api', 'API requests']];
  const api = (r) => (r.api_requests && typeof r.api_requests === 'object' ? Object.values(r.api_requests).reduce((a, b) => a + b, 0) : r.api_requests);
  const val = (r, k) => (k === 'api' ? api(r) : r[k]);
  const fleet = (r) => `${r.target} ${nodes(r.nodes)}`;
  const ratio = (a, b) => (isNum(a) && isNum(b) && b > 0 ? `${+(a / b).toPrecision(2)}×` : '—');
  const pairs = runs.filter((r) => r.controller === 'fleet-attach').flatMap((fa) => {
    const up = runs.find((r) => r.controller === 'upstream' && r.target === fa.target && r.nodes === fa.nodes && r.qps === fa.qps);
    return up ? [{ fa, up }] : [];
  });
  const shipped = (fa) => runs.find((r) => r.controller === 'upstream' && r.target === fa.target && r.nodes === fa.nodes && r.qps === 20);
  const coldVsShipped = (fa) => {
    const d = shipped(fa);
    if (!d) return '';
    const up = isNum(d.converge_s) ? `cold-starts in ${sig(d.converge_s, ' s')}` : 'did not converge within the cap';
    return `; upstream at its shipped 20 qps ${up} (fleet-attach: ${sig(fa.converge_s, ' s')})`;
  };
  return {
    name: 'Against upstream kube-controller-manager',
    script: 'bench:peer',
    command: p?.command,
    readme: pairs.length === 0 ? undefined
      : `fleet-attach ÷ upstream, same fleet and qps: ${pairs.map(({ fa, up }) => `${fleet(fa)} nodes: ${isNum(up.converge_s)
        ? FIG.map(([k, label]) => `${label} ${ratio(val(fa, k), val(up, k))}`).join(', ')
        // Figures of a run cut off at its cap are not comparable, but for the memory it reached.
        : `fleet-attach cold-starts in ${sig(fa.converge_s, ' s')}, upstream did not within the cap; peak RSS ${ratio(fa.peak_rss_mb, up.peak_rss_mb)}`}${coldVsShipped(fa)}`).join('; ')}`,
    section: () => runs.length === 0 ? undefined : [
      'fleet-attach and upstream kube-controller-manager v1.37 (only its attach/detach controller), each cold against a freshly generated fleet of the same seed (nodes × 10 pods, PVC and PV each), one after the other; `sim`: the embedded simulator, `real`: etcd + kube-apiserver v1.37 with the fleet played over the API. qps: the client qps and burst (20: upstream at its shipped 20 / 30). API requests: the controller\'s resource requests over the whole run (simulator: its request hook; real: the audit log of the controller\'s ServiceAccount).',
      '',
      table(['fleet', 'controller', 'qps', 'cold start', 'CPU s', 'peak RSS', 'pod→VA p50 / p99', 'detach all', 'API requests'], runs.map((r) => [
        fleet(r), r.controller, int(r.qps), isNum(r.converge_s) ? sig(r.converge_s, ' s') : 'timed out', sig(r.cpu_s), sig(r.peak_rss_mb, ' MiB'),
        `${sig(r.pod_to_va_p50_ms, ' ms')} / ${sig(r.pod_to_va_p99_ms, ' ms')}`, sig(r.detach_all_s, ' s'), int(api(r)),
      ])),
      '',
      ...(pairs.length ? [table(['fleet, qps', ...FIG.map(([, label]) => `${label} ÷`)], pairs.map(({ fa, up }) => [`${fleet(fa)}, ${int(fa.qps)}`, ...FIG.map(([k]) => ratio(val(fa, k), val(up, k)))])), ''] : []),
      ...runs.filter((r) => r.note).map((r) => `- ${fleet(r)} ${r.controller} qps ${int(r.qps)}: ${r.note}`),
      '',
      ...chart('peer.svg', 'fleet-attach ÷ upstream'),
    ],
  };
}

/** Several active replicas under faults (bench/results/scale-out.json): the checker's verdict, takeovers, throughput by N. */
function scaleOut(r) {
  const muts = r?.mutation_runs ?? [];
  const caught = muts.filter((m) => (m.violations?.length ?? 0) > 0).length;
  const tp = Object.values(r?.throughput ?? {}).sort((a, b) => a.replicas - b.replicas);
  return {
    name: 'Scale-out (several active replicas)',
    script: 'bench:scale-out',
    command: r?.command,
    readme: r === undefined ? undefined
      : `${int(r.faults)} seeded faults, ${int(r.violations.length)} violations; ${caught} of ${muts.length} mutation runs (a guard off) caught; takeover after SIGKILL p50 ${sig(r.takeover_p50_s, ' s')}, p99 ${sig(r.takeover_p99_s, ' s')} (budget ${sig(r.takeover_budget_s, ' s')}); write-bound throughput N = ${tp.map((t) => t.replicas).join('/')}: ${tp.map((t) => sig(t.ops_per_s)).join('/')} writes/s`,
    section: () => r === undefined ? undefined : [
      `Seed ${r.seed}; ${int(r.faults)} faults against ${int(r.fleet?.nodes)} nodes × ${int(r.fleet?.podsPerNode)} pods and ${int(r.buckets)} buckets, lease ${sig(r.lease_duration_s, ' s')} and grace ${sig(r.grace_s, ' s')}; the checker judges every committed write (docs/scale-out.md).`,
      '',
      table(['run', 'guards off', 'violations', 'by invariant'], [
        ['main', '—', int(r.violations.length), Object.entries(r.violation_counts ?? {}).filter(([, n]) => n > 0).map(([k, n]) => `${k} × ${n}`).join(', ') || 'none'],
        ...muts.map((m) => [`mutation ${m.guard}`, (m.guards_off ?? [m.guard]).join(', '), int(m.violations.length), Object.entries(m.violation_counts ?? {}).filter(([, n]) => n > 0).map(([k, n]) => `${k} × ${n}`).join(', ') || 'none']),
      ]),
      '',
      `Takeover after SIGKILL (${int(r.takeover_kills)} kills): p50 ${sig(r.takeover_p50_s, ' s')}, p99 ${sig(r.takeover_p99_s, ' s')}, max ${sig(r.takeover_max_s, ' s')} (budget ${sig(r.takeover_budget_s, ' s')}); graceful hand-over p50 ${sig(r.handover_scale_down_s?.p50, ' s')}, max ${sig(r.handover_scale_down_s?.max, ' s')}; convergence ${sig(r.convergence?.seconds, ' s')} after the faults.`,
      '',
      table(['replicas', 'writes/s', 'vs 1', 'CPU per replica (cores)', 'RSS per replica'], tp.map((t) => [
        int(t.replicas), sig(t.ops_per_s), tp[0]?.ops_per_s ? `${sig(t.ops_per_s / tp[0].ops_per_s)}×` : '—',
        (t.per_replica ?? []).map((x) => sig(x.cpu_cores)).join(', '), (t.per_replica ?? []).map((x) => sig(x.rss_mb, ' MB')).join(', '),
      ])),
      '',
      ...(r.notes ?? []).map((n) => `- ${n}`),
      '',
      ...chart('scale-out.svg', 'throughput by replicas and takeover times'),
    ],
  };
}

/** Benches outside the tiers, run as options: listed with their figures when their results exist. */
function options(h2r, h2ret) {
  const lines = [];
  if (h2r?.cpu_us_per_request) {
    const c = h2r.cpu_us_per_request;
    lines.push(`- ${code(h2r.command ?? 'npm run bench:api -- --h2-request')}: client CPU of one HTTP/2 request on Node's own client: ${sig(c.native, ' µs')} as is, ${sig(c['light+priority'], ' µs')} with the two Node 20 workarounds of src/kube/raw-write.ts (${sig(h2r.raw_write_over_native)}×).`);
  }
  if (h2ret?.variants) {
    const v = h2ret.variants;
    lines.push(`- ${code(h2ret.command ?? 'npm run bench:api -- --h2-retention')}: bytes promoted per finished call: HTTP/2 ${sig(v.http2?.promoted_bytes_per_call, ' B')}${v['http2-node-map'] ? `, HTTP/2 with Node's own stream Map ${sig(v['http2-node-map'].promoted_bytes_per_call, ' B')}` : ''}, HTTP/1.1 ${sig(v['http1.1']?.promoted_bytes_per_call, ' B')}.`);
  }
  return lines;
}

function benches() {
  return [kernel(load('kernel')), listRead(load('list-read')), sim(load('sim')), api(load('api-writes')), heap(load('heap')), http(load('http'), load('http-alloc')), dashboard(load('dashboard')), e2e(load('e2e')), peer(load('peer')), scaleOut(load('scale-out'))];
}

/** The README block: one line per bench. */
export function benchBlock() {
  const note = '<!-- generated by `npm run bench:table` from bench/results/*.json; edit scripts/bench-table.js, not this block -->';
  const rows = benches().map((b) => [b.name, b.readme ?? 'not measured yet', code(`npm run ${b.script}`)]);
  return [
    note,
    table(['bench', 'key figures', 'command'], rows),
    '',
    'Every figure, the exact commands and the charts: [bench/results/summary.md](bench/results/summary.md). What they mean and what limits the controller at scale: [docs/performance.md](docs/performance.md).',
  ].join('\n');
}

const clock = (s) => (isNum(s) ? `${Math.floor(s / 60)} min ${String(Math.round(s % 60)).padStart(2, '0')} s` : '—');

/** bench/results/summary.md. */
export function summary() {
  const run = load('run');
  const head = [
    '# Benchmark summary',
    '',
    '<!-- generated by `npm run bench:table` (scripts/bench-table.js) from bench/results/*.json; do not edit -->',
    '',
    'All figures from one 2-core machine that also runs the simulator and the load clients; runs of the same code differ by up to ~1.5× from one hour to the next. [docs/performance.md](../../docs/performance.md) explains them.',
  ];
  if (run?.steps?.length) {
    const load = Array.isArray(run.loadavg_start) ? ` on a machine with a load average of ${run.loadavg_start[0]} at the start and ${run.loadavg_end?.[0] ?? '—'} at the end` : '';
    head.push('', `Last harness run: ${code(run.command)} (${run.tier} tier), ${clock(run.wall_s)} in all${load}.`, '',
      table(['step', 'command', 'status', 'time'], run.steps.map((s) => [s.name, code(s.command), s.status === 'ok' ? 'ok' : `**${s.status}** (exit ${s.exit_code ?? s.signal})`, clock(s.seconds)])));
  }
  const sections = benches().map((b) => {
    const body = b.section();
    const command = b.perSize ? [] : [`Command: ${code(b.command ?? `npm run ${b.script}`)}`, ''];
    return [`## ${b.name}`, '', ...command, ...(body ?? [`Not measured yet: ${code(`npm run ${b.script}`)}.`])].join('\n');
  });
  const more = options(load('h2-request'), load('h2-retention'));
  if (more.length) sections.push(['## Options outside the tiers', '', 'Checks of the Node 20 workarounds in the HTTP/2 client, worth a run on a new Node major:', '', ...more].join('\n'));
  return `${[head.join('\n'), ...sections].join('\n\n').replace(/\n{3,}/g, '\n\n')}\n`;
}

function writeSummary() {
  const text = summary();
  const old = existsSync(SUMMARY) ? readFileSync(SUMMARY, 'utf8') : '';
  if (old !== text) writeFileSync(SUMMARY, text);
  console.log(old === text ? 'bench/results/summary.md already up to date' : 'wrote bench/results/summary.md');
}

function main(args) {
  const known = ['--print', '--check', '--summary'];
  const unknown = args.find((a) => !known.includes(a));
  if (unknown) {
    console.error(`bench-table: unknown flag ${unknown} (flags: ${known.join(' ')})`);
    return 2;
  }
  if (args.includes('--print')) {
    console.log(benchBlock());
    return 0;
  }
  if (args.includes('--summary')) {
    writeSummary();
    return 0;
  }
  const text = readFileSync(README, 'utf8');
  const b = text.indexOf(BEGIN);
  const e = text.indexOf(END);
  if (b < 0 || e < b) {
    console.error(`README.md has no ${BEGIN} … ${END} block`);
    return 2;
  }
  const next = `${text.slice(0, b + BEGIN.length)}\n${benchBlock()}\n${text.slice(e)}`;
  if (args.includes('--check')) {
    if (next === text) return 0;
    console.error('README.md benchmark table is out of date: run npm run bench:table');
    return 1;
  }
  writeSummary();
  if (next !== text) writeFileSync(README, next);
  console.log(next === text ? 'README.md benchmark table already up to date' : 'README.md benchmark table regenerated');
  return 0;
}

process.exitCode = main(process.argv.slice(2));
