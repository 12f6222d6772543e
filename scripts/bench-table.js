#!/usr/bin/env node
// Regenerates the README's benchmark tables from bench/results/*.json: everything between the
// lines `<!-- bench:begin -->` and `<!-- bench:end -->` of README.md is replaced; nothing else
// is touched. A results file that is missing or lacks a field gives "—", never an error.
//
//   node scripts/bench-table.js           rewrite README.md
//   node scripts/bench-table.js --check   exit 1 if README.md is not what the results give
//   node scripts/bench-table.js --print   print the generated block
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const README = new URL('README.md', root);
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
/** An objects/s rate and its share of a baseline. */
const rate = (v, share) => (isNum(v) ? `${short(v)}/s${isNum(share) ? ` (${pct(share)})` : ''}` : '—');
const day = (d) => (typeof d === 'string' ? d.slice(0, 10) : '—');
const loadAvg = (l) => (Array.isArray(l) && isNum(l[0]) ? l[0].toFixed(1) : '—');

function table(head, rows) {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

function kernelSection(k) {
  if (!k?.sizes?.length) return '**Plan kernel** (`npm run bench:kernel`): no results yet.';
  const rows = k.sizes.map((s) => [
    int(s.nodes), int(s.pairs), sig(s.wasm_p50_ms, ' ms'), sig(s.wasm_p99_ms, ' ms'), sig(s.pool_p50_ms, ' ms'), sig(s.reference_p50_ms, ' ms'),
    sig(s.floor_p50_ms, ' ms'), sig(s.wasm_vs_floor), isNum(s.speedup_vs_reference) ? `${int(s.speedup_vs_reference)}×` : '—', sig(s.bytes_per_pair),
    `${short(s.mutations_per_s)} (${short(s.mutations_per_s_best_window)} best window)`,
  ]);
  return [
    `**Plan kernel** (\`npm run bench:kernel\`; ${day(k.date)}, load average ${loadAvg(k.machine?.loadavg_at_end)}): nodes × 10 volumes, 1% of pairs differing.`,
    '',
    table(['nodes', 'pairs', 'plan p50 (WASM, main thread)', 'p99', 'pool p50', 'Map reference p50', 'sequential-read floor p50', 'WASM ÷ floor', 'reference ÷ WASM', 'bytes/pair', 'mutations/s'], rows),
  ].join('\n');
}

function listReadSection(l) {
  if (!l?.sim || !l?.production) return '**List page reading** (`npm run bench:list-read`): no results yet.';
  const rows = [['simulator', l.sim], ['production-shaped', l.production]].map(([name, r]) => {
    const ms = r.ms_per_100k_pods ?? {};
    const to = r.to_inline ?? {};
    return [name, int(r.bytes_per_pod), pct(r.sieve_kept_fraction), `${int(ms.inline)} ms`, `${int(ms.sieve)} ms (${sig(to.sieve)}×)`, `${int(ms.sieve_pass)} ms`, `${int(ms.worker_side)} ms`, `${int(ms.worker_sieve_side)} ms`, `${int(ms.main_side)} ms (${sig(to.main_side)}×)`];
  });
  return [
    `**List page reading** (\`npm run bench:list-read\`; ${day(l.date)}, load average ${loadAvg(l.loadavg_at_end)}): ${int(l.pods)} pods in pages of ${int(l.page_size)}, each reader in turn on one thread, medians of ${int(l.rounds)} rounds in ms per 100k pods; ratios to the whole parse from the same rounds.`,
    '',
    table(['pods', 'bytes/pod', 'kept by the sieve', 'whole: UTF-8 + JSON.parse + projection', 'sieve + JSON.parse + projection (÷ whole)', 'of which the WebAssembly pass', 'worker reader: worker side, whole', 'worker side, sieved (the default)', 'worker readers: main thread (÷ whole)'], rows),
  ].join('\n');
}

function simSection(s) {
  if (!s?.results?.length) return '**Simulator** (`npm run bench:sim`): no results yet.';
  const rows = s.results.map((r) => [
    int(r.nodes), short(r.objects), int(r.heapBytesPerObject), `${short(r.listObjectsPerSec)} obj/s`,
    `${short(r.watchEventsDeliveredPerSec)} events/s`, `${short(r.populateObjectsPerSec)} obj/s`,
  ]);
  return [
    `**Simulator** (\`npm run bench:sim\`; ${day(s.date)}, load average ${loadAvg(s.loadAverage)}):`,
    '',
    table(['nodes', 'objects', 'heap bytes/object', `paged list (${s.pageSize ?? 500}/page)`, `watch, ${s.results[0].watchers ?? 4} watchers`, 'populate'], rows),
  ].join('\n');
}

/** Major GC pauses and pauses of 50 ms or more in a window (bench/lib/gc-pauses.ts); '—' for runs before it was recorded. */
function apiSection(a) {
  if (!a?.raw) return '**API calls** (`npm run bench:api`): no results yet.';
  const row = (name, r) => [name, sig(r?.cpu_us_per_call, ' µs'), sig(r?.server_cpu_us_per_call, ' µs'), int(r?.calls_per_s)];
  return [
    `**API calls** (\`npm run bench:api\`; ${day(a.date)}, load average ${loadAvg(a.machine?.loadavg_at_end)}): the four hot calls (VolumeAttachment create, Node status patch, Node GET, VolumeAttachment delete) against the simulator in another process, ${int(a.config?.concurrency)} at a time; CPU per call of this client and of the simulator (medians of ${int(a.config?.reps)} runs of ${int(a.config?.quads ? a.config.quads * 4 : undefined)} calls).`,
    '',
    table(['path', 'client CPU/call', 'server CPU/call', 'calls/s'], [
      row('generated client (HTTP/1.1)', a.generated),
      row('raw, HTTP/1.1 keep-alive', a.raw_h1),
      row('raw, HTTP/2 (default)', a.raw),
    ]),
    '',
    `HTTP/1.1 ÷ HTTP/2: client ${sig(a.cpu_per_call_raw_h1_over_raw_h2)}×, server ${sig(a.server_cpu_per_call_raw_h1_over_raw_h2)}×; generated ÷ raw HTTP/1.1 (client): ${sig(a.cpu_per_call_generated_over_raw_h1)}×.`,
  ].join('\n');
}

function h2Section(h) {
  if (!h?.cpu_us_per_request) return '**HTTP/2 request** (`npm run bench:h2`): no results yet.';
  const c = h.cpu_us_per_request;
  return [
    `**HTTP/2 request on Node 20** (\`npm run bench:h2\`; ${day(h.date)}, load average ${loadAvg(h.machine?.loadavg_at_end)}): client CPU per request of Node's own HTTP/2 client (${int(h.config?.requests)} POSTs, ${int(h.config?.concurrency)} at a time, to an h2c server in another process), one process per variant, medians of ${int(h.config?.rounds)} rounds in rotating order.`,
    '',
    table(['variant', 'client CPU/request', '÷ native'], [
      ['`session.request()` as is', sig(c.native, ' µs'), '1'],
      ['with the light `AsyncResource#bind` (src/kube/light-async-bind.ts)', sig(c['light-bind'], ' µs'), sig(h.light_bind_over_native)],
      ['and the default priority given, as one literal (what src/kube/raw-write.ts sends)', sig(c['light+priority'], ' µs'), sig(h.raw_write_over_native)],
      ...(c['light+spread'] === undefined ? [] : [[
        'the same options built by a spread, `{ ...priority, endStream, signal }` (raw-write before session 25)',
        sig(c['light+spread'], ' µs'), sig(c['light+spread'] / c.native),
      ]]),
    ]),
  ].join('\n');
}

function h2RetentionSection(h) {
  if (!h?.variants) return '**What a finished call leaves** (`npm run bench:h2-retention`): no results yet.';
  const row = (name, v) => [name, sig(v?.promoted_bytes_per_call, ' B'), sig(v?.young_survivor_bytes_per_call, ' B'), sig(v?.scavenge_pause_ms_per_1000_calls, ' ms'), sig(v?.cpu_us_per_call, ' µs')];
  return [
    `**What a finished call leaves for the collector** (\`npm run bench:h2-retention\`; ${day(h.date)}, load average ${loadAvg(h.machine?.loadavg_at_end)}): the controller's \`sendRaw\` over TLS to a server in another process, half creates (answer drained), half reads (answer parsed), ${int(h.config?.requests)} calls ${int(h.config?.concurrency)} at a time, each transport in its own process under \`--trace-gc-nvp\`, medians of ${int(h.config?.rounds)} rounds.`,
    '',
    table(['transport', 'promoted/call', 'young survivors/call', 'scavenge pause per 1,000 calls', 'CPU/call'], [
      row('HTTP/2 (default: streams in a StreamTable)', h.variants.http2),
      ...(h.variants['http2-node-map'] ? [row("HTTP/2, Node's own stream Map", h.variants['http2-node-map'])] : []),
      row('HTTP/1.1 keep-alive', h.variants['http1.1']),
    ]),
    '',
    `HTTP/2 − HTTP/1.1 promoted: ${sig(h.promoted_http2_minus_http1_bytes_per_call, ' B')} per call; scavenge pause HTTP/2 ÷ HTTP/1.1: ${sig(h.scavenge_pause_http2_over_http1)}×; CPU HTTP/2 ÷ HTTP/1.1: ${sig(h.cpu_http2_over_http1)}×.` +
      (h.promoted_stream_table_over_node_map !== undefined ? ` StreamTable ÷ Node's Map: promoted ${sig(h.promoted_stream_table_over_node_map)}×, scavenge pause ${sig(h.scavenge_pause_stream_table_over_node_map)}×.` : ''),
  ].join('\n');
}

function storeStringsSection(s) {
  if (!s?.variants) return '**The simulator\'s stored text** (`npm run bench:store-strings`): no results yet.';
  const row = (name, v) => [name, sig(v?.scavenge_pause_ms_per_1000_writes, ' ms'), sig(v?.scavenge_helper_ms_per_1000_writes, ' ms'), sig(v?.young_survivor_bytes_per_write, ' B'), sig(v?.promoted_bytes_per_write, ' B'), sig(v?.cpu_us_per_write, ' µs')];
  return [
    `**The simulator's stored text, flat or a rope** (\`npm run bench:store-strings\`; ${day(s.date)}, load average ${loadAvg(s.machine?.loadavg_at_end)}): a store-shaped sketch, ${int(s.config?.objects)} pod-sized objects kept as JSON text, ${int(s.config?.writes)} rewrites each recorded with its previous text in a ${int(s.config?.window)}-event window, each variant in its own process under \`--trace-gc-nvp\` (64 MB semi-spaces), medians of ${int(s.config?.rounds)} rounds.`,
    '',
    table(['rewritten text', 'scavenge pause per 1,000 writes', 'helper threads per 1,000 writes', 'young survivors/write', 'promoted/write', 'CPU/write'], [
      row('flat (`join`, src/sim/store/create-sim-store.ts)', s.variants.flat),
      row('rope (a template literal, before session 26)', s.variants.rope),
    ]),
    '',
    `Flat ÷ rope: scavenge pause ${sig(s.scavenge_pause_flat_over_rope)}×, helper threads ${sig(s.scavenge_helpers_flat_over_rope)}×, CPU ${sig(s.cpu_flat_over_rope)}×.`,
  ].join('\n');
}

function besideSection(b) {
  if (!b?.h2) return '**API calls beside the inspection API** (`npm run bench:api-beside-http`): no results yet.';
  const row = (name, r, us) => [name, int(r?.bare_req_per_s), sig(r?.bare_p99_ms, ' ms'), int(r?.api_calls_per_s), sig(r?.elu), us];
  return [
    `**API calls beside the inspection API** (\`npm run bench:api-beside-http\`; ${day(b.date)}, load average ${loadAvg(b.machine?.loadavg_at_end)}): the four hot calls paced at ${int(b.config?.rate_calls_per_s)}/s to the simulator in another process while autocannon (${int(b.config?.connections)} connections) loads a bare fastify route of the same process; medians of ${int(b.config?.reps)} runs of ${int(b.config?.seconds)} s. Loop time per call: the event-loop utilisation left after the bare requests (at their cost without API calls), per call.`,
    '',
    table(['API calls', 'bare route req/s', 'bare p99', 'API calls/s', 'event-loop utilisation', 'loop time per API call'], [
      row('none', b.none, `— (${sig(b.none?.loop_us_per_bare_request, ' µs')} per bare request)`),
      row('HTTP/1.1', b.h1, sig(b.h1?.loop_us_per_api_call, ' µs')),
      row('HTTP/2 (default)', b.h2, sig(b.h2?.loop_us_per_api_call, ' µs')),
    ]),
    '',
    `Bare route beside HTTP/1.1 ÷ beside HTTP/2: ${sig(b.bare_req_per_s_h1_over_h2)}×; loop time per call HTTP/2 ÷ HTTP/1.1: ${sig(b.loop_us_per_call_h2_over_h1)}×.`,
  ].join('\n');
}

function gcCell(g) {
  if (!g) return '—';
  return `${int(g.major.count)} (${sig(g.major.max_ms, ' ms')}) / ${int(g.over_50ms)}`;
}

function heapSection(h) {
  if (!h?.per_pod) return '**Controller heap** (`npm run bench:heap`): no results yet.';
  const p = h.per_pod;
  const [a, b] = h.runs;
  return [
    `**Controller heap** (\`npm run bench:heap\`; ${day(h.date)}): live heap of the converged controller, per pod (each with its own PVC, PV and VolumeAttachment), the slope between ${int(a.nodes)} and ${int(b.nodes)} nodes; what every major GC marks.`,
    '',
    table(['live bytes/pod', 'live objects/pod', 'strings', 'ropes', 'objects', 'arrays', 'other'], [[int(p.heap_bytes), sig(p.objects), sig(p.strings), sig(p.ropes), sig(p.objects_plain), sig(p.arrays), sig(p.other)]]),
  ].join('\n');
}

function httpAllocSection(a) {
  if (!Array.isArray(a?.routes)) return '**Allocation per inspection request** (`npm run bench:http-alloc`): no results yet.';
  const names = { bare: 'bare fastify route', 'bare-sized': 'bare route, node-sized body', node: '/api/v1/nodes/{name}', volume: '/api/v1/volumes/{uniqueName}', summary: '/api/v1/summary' };
  const top = (r) => (r.top ?? []).slice(0, 3).map((t) => `${t.fn.split(' ')[0]} ${int(t.bytes_per_request)} B`).join('; ');
  return [
    `**Allocation per inspection request** (\`npm run bench:http-alloc\`; ${day(a.date)}, load average ${loadAvg(a.machine?.loadavg_at_end)}): heap bytes allocated per request, freed ones included (V8's sampling heap profiler), on the stand-in controller at ${int(a.nodes)} nodes with its loop stopped, ${int(a.duration_s)} s of autocannon per route; the node answer is ${int(a.node_answer_bytes)} bytes. What sets how often requests meet a scavenge.`,
    '',
    table(['route', 'bytes/request', 'largest allocators (bytes/request)'], a.routes.map((r) => [names[r.route] ?? r.route, int(r.bytes_per_request), top(r)])),
    '',
    `Node lookup ÷ node-sized bare route: ${sig(a.node_over_bare_sized)}×.`,
  ].join('\n');
}

function httpSection(h) {
  if (!h?.endpoints?.length) return '**Inspection API** (`npm run bench:http`): no results yet.';
  const largest = Math.max(...h.endpoints.map((e) => e.nodes ?? 0));
  const at = h.endpoints.filter((e) => e.nodes === largest);
  // Server CPU per request and loop utilisation: runs since they were recorded.
  const withCpu = at.some((e) => isNum(e.server_cpu_us_per_req));
  const rows = at.map((e) => [e.name, int(e.req_per_s), sig(e.p50_ms, ' ms'), sig(e.p99_ms, ' ms'), ...(withCpu ? [isNum(e.server_cpu_us_per_req) ? sig(e.server_cpu_us_per_req, ' µs') : '—', isNum(e.server_elu) ? sig(e.server_elu) : '—'] : [])]);
  const met = (ok) => (ok === undefined ? '' : ok ? ' ✓' : ' ✗');
  const runs = (h.runs ?? []).filter((r) => !r.failed);
  // The bare route does less than the node-sized one; when it served clearly fewer requests
  // (more than 20% fewer: the two are equal within the noise otherwise), the controller's own
  // work fell into its sweeps and it is no ceiling: no verdict on the ratio.
  const ceilingValid = (r) => {
    const rate = (name) => h.endpoints.find((e) => e.nodes === r.nodes && e.name === name)?.req_per_s;
    const bare = rate('bare fastify route');
    const sized = rate('bare route, node-sized body');
    return !(isNum(bare) && isNum(sized) && bare < 0.8 * sized);
  };
  const targetRows = runs.map((r) => [
    int(r.nodes), sig(r.converge_s, ' s'), ceilingValid(r) ? `${pct(r.node_vs_ceiling)}${met(r.targets?.node_vs_ceiling_min_0_5)}` : `${pct(r.node_vs_ceiling)} (no ceiling: the bare route was far slower than the node-sized one) ?`,
    `${sig(r.node_p99_ms_saturated, ' ms')}${met(r.targets?.node_p99_max_5ms_saturated)}`, `${sig(r.node_p99_ms_paced, ' ms')}${met(r.targets?.node_p99_max_5ms_paced)}`,
    `${sig(r.loop_p99_ms_idle, ' ms')} / ${sig(r.loop_p99_ms_loaded, ' ms')}${met(r.targets?.loop_p99_loaded_max_1_2x_idle)}`,
    `${sig(r.event_loop_delay?.loaded?.p99_ms, ' ms')} / ${sig(r.event_loop_delay?.loaded?.max_ms, ' ms')}`,
    gcCell(r.gc_pauses?.paced),
  ]);
  return [
    `**Inspection API** (\`npm run bench:http\`; ${day(h.date)}, load average ${loadAvg(h.machine?.loadavg_end)}): the real controller reconciling the simulated fleet under churn, in the bench process. Per fleet size, the issue's targets (node lookup ≥ 50% of the bare route, p99 ≤ 5 ms, loop p99 under load ≤ 1.2× idle). GC pauses are the controller's process's (major and minor collections); — where a run predates that column:`,
    '',
    table(['nodes', 'cold start converged in', 'node lookup ÷ bare route', 'node p99 saturated', 'node p99 paced 2,000/s', 'loop p99 idle / loaded', 'event loop delay p99 / max (loaded)', 'GC pauses in the paced minute: major (longest) / ≥ 50 ms'], targetRows),
    '',
    `Each endpoint alone at ${int(largest)} nodes${withCpu ? "; server CPU per request is the bench process's (controller, API and plan worker together, so the controller's own work in the sweep is in it), event-loop utilisation over the sweep" : ''}:`,
    '',
    table(['endpoint', 'req/s', 'p50', 'p99', ...(withCpu ? ['server CPU/req', 'event-loop utilisation'] : [])], rows),
  ].join('\n');
}

/** The periodic passes' event-loop time per pass, for runs that recorded it (a line, or none). */
function periodicLine(runs) {
  const withPasses = runs.filter((r) => r.periodic_passes && Object.keys(r.periodic_passes).length > 0);
  if (withPasses.length === 0) return [];
  const cell = (p) => (p ? `${sig(p.busy_s_mean, ' s')} (${int(p.passes)})` : '—');
  const parts = withPasses.map((r) => `${int(r.nodes)} nodes: verify ${cell(r.periodic_passes.verify)}, C9 ${cell(r.periodic_passes['pods-removed'])}, C10 ${cell(r.periodic_passes['pods-listed'])}`);
  return [`Periodic passes (\`fleet_attach_periodic_pass_busy_seconds\`), event-loop time per pass (passes completed in the run): ${parts.join('; ')}.`, ''];
}

/** The controller's in-flight bound per run: recorded from fec640c on (the simulator's sizing); 96, the flag's default, before. */
function inFlightNote(all) {
  const bound = (r) => (r.kube_api_max_in_flight === undefined ? '96 (the flag\'s default)' : int(r.kube_api_max_in_flight));
  const bounds = [...new Set(all.map(bound))];
  const which = bounds.length === 1 ? bounds[0] : all.map((r) => `${bound(r)} at ${int(r.nodes)} nodes`).join(', ');
  const page = (r) => (r.list_page_size === undefined ? '500 (the flag\'s default)' : int(r.list_page_size));
  const pages = [...new Set(all.map(page))];
  const listed = pages.length === 1 ? pages[0] : all.map((r) => `${page(r)} at ${int(r.nodes)} nodes`).join(', ');
  return `The controller's client kept ${which} requests in flight (src/sim/server/client-sizing.ts sizes it to the simulator from fec640c on) and listed ${listed} objects a page (sized to the simulator in session 12).`;
}

function e2eSection(e) {
  const all = e?.runs ?? [];
  const runs = all.filter((r) => !r.failed);
  if (!all.length) return '**End to end** (`npm run bench:e2e`): no results yet.';
  /** A failed run: its first line, shortened (e.g. "controller exited (code null, signal SIGABRT)"). */
  const failure = (r) => {
    const first = String(r.failed).split('\n')[0];
    const attached = /attached (\d+)/.exec(first)?.[1];
    return `failed: ${first.split(': ')[0].slice(0, 80)}${attached === undefined ? '' : `, ${int(Number(attached))} attached`}`;
  };
  const converge = (r) => (r.failed ? failure(r) : r.converged === false ? `not in ${int(r.converge_timeout_s ?? 900)} s` : sig(r.converge_s, ' s'));
  const rows = all.map((r) => [
    int(r.nodes), int(r.pods), converge(r), sig(r.controller_cpu_s, ' s'), int(r.peak_rss_mb ?? r.peak_rss_mb_at_failure),
    rate(watchIngest(r).rate, watchIngest(r).ratio), rate(syncOf(r).rate, syncOf(r).ratio), rate(syncOf(r).podRate, syncOf(r).podRatio), short(r.json_parse_events_per_s),
    int(r.api_writes_per_s), `${r.loop_p50_beyond_last_bucket ? '> ' : ''}${sig(r.loop_p50_ms)} / ${r.loop_p99_beyond_last_bucket ? '> ' : ''}${sig(r.loop_p99_ms)} ms`, `${sig(r.plan_p50_ms)} / ${sig(r.plan_p99_ms)} ms`,
    `${r.pod_to_va_p50_at_least ? '≥ ' : ''}${sig(r.pod_to_va_p50_ms)} / ${r.pod_to_va_p99_at_least ? '≥ ' : ''}${sig(r.pod_to_va_p99_ms)} ms`,
  ]);
  const at = (n) => all.find((r) => r.nodes === n);
  const verdict = (ok, what) => `${what}: ${ok === undefined ? 'not measured' : ok ? '**met**' : '**missed**'}`;
  const r50 = at(50_000);
  const r100 = at(100_000);
  const targets = [
    verdict(r50 && (isNum(r50.converge_s) ? r50.converge_s <= 120 : false), '50k converge ≤ 120 s'),
    verdict(r100 && (isNum(r100.converge_s) ? r100.converge_s <= 240 : false), '100k ≤ 240 s (stretch)'),
    verdict(r50 && isNum(r50.loop_p99_ms) ? r50.loop_p99_ms <= 20 : r50 ? false : undefined, 'loop p99 ≤ 20 ms at 50k under churn'),
    verdict(runs.some((r) => isNum(r.pod_to_va_p99_ms)) ? runs.every((r) => !isNum(r.pod_to_va_p99_ms) || r.pod_to_va_p99_ms <= 200) : undefined, 'pod-to-VA p99 ≤ 200 ms'),
    verdict(runs.some((r) => isNum(watchIngest(r).ratio)) ? runs.every((r) => !isNum(watchIngest(r).ratio) || watchIngest(r).ratio >= 0.7) : undefined, 'watch ingest ≥ 70% of JSON.parse'),
  ];
  return [
    `**End to end** (\`npm run bench:e2e\`; ${day(e.date)}, load average ${loadAvg(e.machine?.loadavg_at_end)}): simulator and controller as separate processes on the same 2 cores, cold start, then ${int(e.config?.steady_s)} s of churn at ${int(e.config?.churn_per_s)} pod changes/s. ${inFlightNote(all)} ${ingestNote(all)} Sync is objects/s over the initial sync (all seven lists, end to end), and pods/s of the controller main thread's time reading the pod pages (from a0a97c2 on, a worker parses and projects them and the main thread decodes the projections, and from session 23 the worker sieves them first, \`--list-reader worker-sieve\`; rows measured before a0a97c2 are the whole parse + projection); both as shares of the same JSON.parse baseline (rows before session 28: the churn minute's pod changes as watch lines, when the sync was the table's "ingest"); loop and plan are the reconcile pass and its WASM plan during churn. ${podVaNote(all)}`,
    '',
    table(['nodes', 'pods', 'converge', 'controller CPU', 'peak RSS MB', 'watch ingest', 'sync', 'sync: pod pages read', 'JSON.parse', 'API writes/s', 'loop p50 / p99', 'plan p50 / p99', 'pod → VA p50 / p99'], rows),
    '',
    ...periodicLine(runs),
    `Targets: ${targets.join('; ')}. Charts: \`bench/results/convergence-time.svg\`, \`loop-time.svg\`, \`ingest-vs-json-parse.svg\`.`,
  ].join('\n');
}

/**
 * A row's watch ingest (session 28 on: the burst of bench/lib/e2e-watch-ingest.ts, as
 * `ingest_events_per_s`); rows before it have none (their `ingest_*` fields were the sync's).
 */
function watchIngest(r) {
  return r.watch_ingest === undefined ? {} : { rate: r.ingest_events_per_s, ratio: r.ingest_ratio };
}

/** A row's initial-sync rates: `sync_*` from session 28 on, the `ingest_*` fields before it. */
function syncOf(r) {
  if (r.sync_objects_per_s !== undefined || r.watch_ingest !== undefined) {
    return { rate: r.sync_objects_per_s, ratio: r.sync_ratio, podRate: r.sync_pod_read_per_s, podRatio: r.sync_pod_read_ratio };
  }
  return { rate: r.ingest_events_per_s, ratio: r.ingest_ratio, podRate: r.ingest_cpu_events_per_s, podRatio: r.ingest_cpu_ratio };
}

/** What the watch ingest column is, and the burst's size per row. */
function ingestNote(runs) {
  const sized = runs.filter((r) => r.watch_ingest !== undefined);
  if (sized.length === 0) return 'Watch ingest was not measured in these rows (from session 28 on, `npm run bench:e2e` measures it after the churn minute).';
  const sizes = [...new Set(sized.map((r) => int(r.watch_ingest.burst_events)))].join(' / ');
  const rounds = [...new Set(sized.map((r) => r.watch_ingest.rounds ?? 1))];
  const of = rounds.length === 1 && rounds[0] === 1 ? 'a burst' : `the median of ${rounds.join(' / ')} bursts, each`;
  return `Watch ingest is pod watch events/s the controller applied from ${of} of ${sizes} MODIFIED events (an annotation changed: nothing its pod projection reads), served after the churn minute as fast as the controller reads them, each through client-node's \`Watch\` like any event (bench/lib/e2e-watch-ingest.ts), as a share of JSON.parse alone on the same lines.`;
}

/** How each row's pod → VA latency was taken (`pod_va_source`; rows without it came from the bench's watches). */
function podVaNote(runs) {
  const by = (kind) => runs.filter((r) => (r.pod_va_source ?? 'watch') === kind).map((r) => short(r.nodes));
  const commit = by('commit');
  const watch = by('watch');
  const parts = [];
  if (commit.length) parts.push(`${commit.join(', ')}: from the commit of a new pod to the commit of its VolumeAttachment, timed inside the simulator (\`--pod-va-source commit\`, the default)`);
  if (watch.length) parts.push(`${watch.join(', ')}: from the bench's first sighting of each on its own watches (\`--pod-va-source watch\`)`);
  return `Pod → VA: ${parts.join('; ')}.`;
}

export function benchBlock() {
  const note = '<!-- generated by `node scripts/bench-table.js` from bench/results/*.json; edit the script, not this block -->';
  return [note, kernelSection(load('kernel')), listReadSection(load('list-read')), simSection(load('sim')), apiSection(load('api-writes')), h2Section(load('h2-request')), h2RetentionSection(load('h2-retention')), storeStringsSection(load('store-strings')), besideSection(load('api-beside-http')), httpSection(load('http')), httpAllocSection(load('http-alloc')), e2eSection(load('e2e')), heapSection(load('heap'))].join('\n\n');
}

function main(args) {
  const block = benchBlock();
  if (args.includes('--print')) {
    console.log(block);
    return 0;
  }
  const text = readFileSync(README, 'utf8');
  const b = text.indexOf(BEGIN);
  const e = text.indexOf(END);
  if (b < 0 || e < b) {
    console.error(`README.md has no ${BEGIN} … ${END} block`);
    return 2;
  }
  const next = `${text.slice(0, b + BEGIN.length)}\n${block}\n${text.slice(e)}`;
  if (args.includes('--check')) {
    if (next === text) return 0;
    console.error('README.md benchmark tables are out of date: run node scripts/bench-table.js');
    return 1;
  }
  if (next !== text) writeFileSync(README, next);
  console.log(next === text ? 'README.md benchmark tables already up to date' : 'README.md benchmark tables regenerated');
  return 0;
}

process.exitCode = main(process.argv.slice(2));
