// The cost of one HTTP/2 request on Node's client, as src/kube/raw-write.ts sends it and as it
// would without its two Node 20 workarounds: `npm run bench:api -- --h2-request [--requests 20000
// --rounds 4 --concurrency 64 --out FILE]` (bench/api-writes.bench.ts). Worth a run on a new Node
// major: when `native` costs what `light+priority` does, the workarounds can go.
//
// Variants, each in its own process (V8's inline caches see one options shape per process, as
// in the controller), against one h2c server in another process that answers 201 with a small
// JSON body:
//   native         session.request(headers, { endStream, signal? })
//   light-bind     the same inside withLightAsyncBind (no DEP0172 accessor per request)
//   light+priority light-bind with h2RequestOptions (priority given up front) (what raw-write sends)
//   light+spread   the same options as `{ ...priority, endStream, signal }`, as raw-write once
//                  built them (on Node 20 each such object gets hidden classes of its own:
//                  raw-write.ts, h2RequestOptions)
// Each client process warms up, then measures its own CPU (user + system) µs per request over
// three blocks of `--requests` POSTs, `--concurrency` at a time (median of the three). The
// variants run in turn, their order rotating, for `--rounds` rounds; the result is the median
// per variant and the ratios between them. Prints JSON and writes bench/results/h2-request.json.
// Child processes run this file (FA_H2_BENCH_ROLE set).
import http2 from 'node:http2';
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { withLightAsyncBind } from '../../src/kube/light-async-bind.js';
import { h2RequestOptions } from '../../src/kube/raw-write.js';
import { forkTs, nextMessage, runChild } from './children.js';
import { median, round } from './stats.js';

const ROLE = 'FA_H2_BENCH_ROLE';
const VARIANTS = ['native', 'light-bind', 'light+priority', 'light+spread'] as const;
const PRIORITY = { weight: http2.constants.NGHTTP2_DEFAULT_WEIGHT, parent: 0, exclusive: false, silent: false } as const;
type Variant = (typeof VARIANTS)[number];

function serverChild(): void {
  const server = http2.createServer();
  server.on('stream', (stream) => {
    stream.on('data', () => undefined);
    stream.on('end', () => {
      stream.respond({ ':status': 201, 'content-type': 'application/json' });
      stream.end('{"kind":"VolumeAttachment"}');
    });
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as { port: number }).port }));
  process.on('disconnect', () => process.exit(0));
}

async function clientChild(variant: Variant, port: number, requests: number, concurrency: number): Promise<void> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  await new Promise((resolve) => session.once('connect', resolve));
  const body = '{"metadata":{"name":"csi-0123456789abcdef"}}';
  const signal: AbortSignal | undefined = undefined;
  const send = (headers: http2.OutgoingHttpHeaders): http2.ClientHttp2Stream => {
    if (variant === 'native') return session.request(headers, { endStream: false, ...(signal ? { signal } : {}) });
    if (variant === 'light-bind') return withLightAsyncBind(() => session.request(headers, { endStream: false, ...(signal ? { signal } : {}) }));
    if (variant === 'light+spread') return withLightAsyncBind(() => session.request(headers, { ...PRIORITY, endStream: false, signal }));
    return withLightAsyncBind(() => session.request(headers, h2RequestOptions(false, signal)));
  };
  const one = () => new Promise<void>((resolve, reject) => {
    const stream = send({ ':method': 'POST', ':path': '/apis/storage.k8s.io/v1/volumeattachments', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), accept: 'application/json', authorization: 'Bearer bench' });
    stream.once('error', reject);
    stream.once('response', () => {
      stream.once('end', resolve);
      stream.resume();
    });
    stream.end(body);
  });
  const block = async (n: number) => {
    let next = 0;
    const lane = async () => {
      while (next++ < n) await one();
    };
    await Promise.all(Array.from({ length: concurrency }, lane));
  };
  await block(requests / 4);
  const perRequest: number[] = [];
  for (let b = 0; b < 3; b++) {
    const c0 = process.cpuUsage();
    await block(requests);
    const c = process.cpuUsage(c0);
    perRequest.push((c.user + c.system) / requests);
  }
  session.close();
  process.send?.({ cpuUsPerRequest: median(perRequest) });
}

export interface RequestBenchConfig { requests: number; rounds: number; concurrency: number; out: string; command: string }

export async function runH2Request({ requests, rounds, concurrency, out, command }: RequestBenchConfig): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const server = forkTs(self, [], { [ROLE]: 'server' });
  try {
    const { port } = await nextMessage<{ port: number }>(server, (m) => typeof m.port === 'number', 30_000);
    const runs: Record<Variant, number[]> = { native: [], 'light-bind': [], 'light+priority': [], 'light+spread': [] };
    for (let r = 0; r < rounds; r++) {
      const order = VARIANTS.map((_, i) => VARIANTS[(i + r) % VARIANTS.length]!);
      for (const v of order) {
        const client = forkTs(self, [], { [ROLE]: 'client', FA_H2_BENCH: JSON.stringify({ variant: v, port, requests, concurrency }) });
        const m = await nextMessage<{ cpuUsPerRequest: number }>(client, (x) => typeof x.cpuUsPerRequest === 'number', 300_000);
        runs[v].push(m.cpuUsPerRequest);
        await client.exited;
      }
    }
    const med = (v: Variant) => median(runs[v]) ?? NaN;
    const text = JSON.stringify({
      bench: 'h2-request',
      command,
      date: new Date().toISOString(),
      machine: { cpus: availableParallelism(), node: process.version, loadavg_at_end: loadavg().map((l) => round(l, 2)) },
      config: { requests, rounds, concurrency },
      cpu_us_per_request: Object.fromEntries(VARIANTS.map((v) => [v, round(med(v), 1)])),
      runs: Object.fromEntries(VARIANTS.map((v) => [v, runs[v].map((x) => round(x, 1))])),
      light_bind_over_native: round(med('light-bind') / med('native'), 2),
      priority_over_light_bind: round(med('light+priority') / med('light-bind'), 2),
      raw_write_over_native: round(med('light+priority') / med('native'), 2),
      literal_over_spread: round(med('light+priority') / med('light+spread'), 2),
    }, null, 2);
    console.log(text);
    writeFileSync(out, `${text}\n`);
  } finally {
    await server.stop();
  }
}

const role = process.env[ROLE];
if (role === 'server') serverChild();
else if (role === 'client') {
  const c = JSON.parse(process.env.FA_H2_BENCH ?? '{}') as { variant: Variant; port: number; requests: number; concurrency: number };
  runChild(async () => {
    await clientChild(c.variant, c.port, c.requests, c.concurrency);
    process.exit(0);
  });
}
