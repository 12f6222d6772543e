// What a finished hot call leaves for the garbage collector, per transport:
// `npm run bench:api -- --h2-retention [--requests 30000 --rounds 4 --concurrency 64 --out FILE]`
// (bench/api-writes.bench.ts); child processes run this file (FA_H2R_BENCH_ROLE set). Worth a run
// on a new Node major: when `http2-node-map` leaves what `http2` does, the StreamTable can go.
//
// A Node 20 HTTP/2 session's Map of open streams, once promoted, leaves a stale old-space table
// behind each time V8 rebuilds it, and the streams in it (with every object a call hangs on
// them) then survive the scavenges until the next full collection; src/kube/h2-stream-table.ts
// says why and what the controller does about it. Over HTTP/1.1 less of a finished request
// survives. This measures it on the controller's own raw
// path (src/kube/raw-write.ts `sendRaw`, authenticated by a kubeconfig as in production) against
// a TLS server offering h2 and HTTP/1.1 by ALPN in another process: half the calls are creates
// whose answer is drained, half reads whose answer is parsed. Each variant runs in its own
// process under `--trace-gc-nvp`; from its scavenges during the measured calls: bytes promoted
// and bytes kept in the young generation per call, scavenge pause per 1,000 calls, and the
// process's CPU per call. Variants alternate for `--rounds`; medians per variant. `http2` is the
// controller's default, its sessions keeping their streams in a StreamTable
// (src/kube/h2-stream-table.ts); `http2-node-map` leaves Node's own Map in place.
import http2 from 'node:http2';
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadKubeConfig } from '../../src/kube/kube-config.js';
import { sendRaw } from '../../src/kube/raw-write.js';
import { generateTls } from '../../src/sim/server/tls.js';
import { forkTs, nextMessage, runChild } from './children.js';
import { scavengesBetween } from './gc-nvp.js';
import type { RequestBenchConfig } from './h2-request.js';
import { median, round } from './stats.js';

const ROLE = 'FA_H2R_BENCH_ROLE';
const VARIANTS = ['http2', 'http2-node-map', 'http1.1'] as const;
type Variant = (typeof VARIANTS)[number];
const START = 'FA-H2R-START';
const END = 'FA-H2R-END';

/** A VolumeAttachment-sized answer (the simulator's are ~1 KB). */
const ANSWER = JSON.stringify({
  apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment',
  metadata: { name: `csi-${'0'.repeat(64)}`, uid: '00000000-0000-0000-0000-000000000000', resourceVersion: '123456', creationTimestamp: '2026-01-01T00:00:00Z', finalizers: ['external-attacher/csi-example-com'] },
  spec: { attacher: 'csi.example.com', nodeName: 'node-000123', source: { persistentVolumeName: `pv-${'b'.repeat(40)}` } },
  status: { attached: true, attachmentMetadata: { devicePath: '/dev/disk/by-id/x' } },
});

async function serverChild(): Promise<void> {
  const tls = await generateTls();
  const server = http2.createSecureServer({ cert: tls.cert, key: tls.key, allowHTTP1: true }, (req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(ANSWER) });
      res.end(ANSWER);
    });
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as { port: number }).port, ca: tls.ca }));
  process.on('disconnect', () => process.exit(0));
}

async function clientChild(variant: Variant, port: number, ca: string, requests: number, concurrency: number): Promise<void> {
  const kc = loadKubeConfig({ yaml: `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}", certificate-authority-data: "${Buffer.from(ca).toString('base64')}"}}]
users: [{name: u, user: {token: bench}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
` });
  kc.http2 = variant !== 'http1.1';
  kc.h2StreamTable = variant !== 'http2-node-map';
  const body = JSON.stringify({ apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: `csi-${'1'.repeat(64)}` }, spec: { attacher: 'csi.example.com', nodeName: 'node-000123', source: { persistentVolumeName: 'pv-1' } } });
  let n = 0;
  const one = () => (n++ % 2 === 0
    ? sendRaw(kc, { method: 'POST', path: '/apis/storage.k8s.io/v1/volumeattachments', body, response: 'drain', timeoutMs: 30_000 })
    : sendRaw(kc, { method: 'GET', path: '/api/v1/nodes/node-000123', response: 'json', timeoutMs: 30_000 }));
  const block = async (count: number) => {
    let next = 0;
    const lane = async () => {
      while (next++ < count) await one();
    };
    await Promise.all(Array.from({ length: concurrency }, lane));
  };
  await block(requests / 4); // warm-up: connections, inline caches, the young generation's size
  console.log(START);
  const c0 = process.cpuUsage();
  await block(requests);
  const c = process.cpuUsage(c0);
  console.log(END);
  kc.close();
  process.send?.({ cpuUsPerRequest: (c.user + c.system) / requests });
}

export async function runH2Retention({ requests, rounds, concurrency, out, command }: RequestBenchConfig): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const server = forkTs(self, [], { [ROLE]: 'server' });
  try {
    const { port, ca } = await nextMessage<{ port: number; ca: string }>(server, (m) => typeof m.port === 'number', 60_000);
    const runs: Record<Variant, Array<{ promoted: number; survived: number; pauseMsPer1000: number; cpuUs: number }>> = { http2: [], 'http2-node-map': [], 'http1.1': [] };
    for (let r = 0; r < rounds; r++) {
      for (const v of r % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) {
        const client = forkTs(self, ['--trace-gc-nvp', '--max-semi-space-size=64'], { [ROLE]: 'client', FA_H2R_BENCH: JSON.stringify({ variant: v, port, ca, requests, concurrency }) });
        const m = await nextMessage<{ cpuUsPerRequest: number }>(client, (x) => typeof x.cpuUsPerRequest === 'number', 600_000);
        await client.exited;
        const s = scavengesBetween(client.output(), START, END);
        runs[v].push({ promoted: s.promoted / requests, survived: s.survived / requests, pauseMsPer1000: (s.pauseMs / requests) * 1000, cpuUs: m.cpuUsPerRequest });
      }
    }
    const med = (v: Variant, k: 'promoted' | 'survived' | 'pauseMsPer1000' | 'cpuUs') => median(runs[v].map((x) => x[k])) ?? NaN;
    const per = (v: Variant) => ({ promoted_bytes_per_call: round(med(v, 'promoted'), 0), young_survivor_bytes_per_call: round(med(v, 'survived'), 0), scavenge_pause_ms_per_1000_calls: round(med(v, 'pauseMsPer1000'), 1), cpu_us_per_call: round(med(v, 'cpuUs'), 1) });
    const text = JSON.stringify({
      bench: 'h2-retention',
      command,
      date: new Date().toISOString(),
      machine: { cpus: availableParallelism(), node: process.version, loadavg_at_end: loadavg().map((l) => round(l, 2)) },
      config: { requests, rounds, concurrency, calls: 'half POST (answer drained), half GET (answer parsed), src/kube/raw-write.ts sendRaw over TLS' },
      variants: { http2: per('http2'), 'http2-node-map': per('http2-node-map'), 'http1.1': per('http1.1') },
      runs,
      promoted_http2_minus_http1_bytes_per_call: round(med('http2', 'promoted') - med('http1.1', 'promoted'), 0),
      scavenge_pause_http2_over_http1: round(med('http2', 'pauseMsPer1000') / med('http1.1', 'pauseMsPer1000'), 2),
      cpu_http2_over_http1: round(med('http2', 'cpuUs') / med('http1.1', 'cpuUs'), 2),
      promoted_stream_table_over_node_map: round(med('http2', 'promoted') / med('http2-node-map', 'promoted'), 2),
      scavenge_pause_stream_table_over_node_map: round(med('http2', 'pauseMsPer1000') / med('http2-node-map', 'pauseMsPer1000'), 2),
    }, null, 2);
    console.log(text);
    writeFileSync(out, `${text}\n`);
  } finally {
    await server.stop();
  }
}

const role = process.env[ROLE];
if (role === 'server') runChild(serverChild);
else if (role === 'client') {
  const c = JSON.parse(process.env.FA_H2R_BENCH ?? '{}') as { variant: Variant; port: number; ca: string; requests: number; concurrency: number };
  runChild(async () => {
    await clientChild(c.variant, c.port, c.ca, c.requests, c.concurrency);
    process.exit(0);
  });
}
