// What the simulator's stored text costs the collector, flat against a rope:
// `npm run bench:store-strings` = `node --import tsx bench/store-strings.bench.ts
// [--objects 300000 --writes 400000 --window 100000 --rounds 4 --out FILE]`.
//
// The simulator keeps every object as its JSON text, and each rewrite's text (the object
// serialised with its old resourceVersion, then given the new one) lives as long as the
// object stays stored or its event sits in the window. src/sim/store/create-sim-store.ts
// `withResourceVersion` builds that text flat; the variant `rope` builds it as the code did
// before session 26, with a template literal, which V8 keeps as a cons of two slices of the
// first serialisation. A store-shaped sketch: `--objects` pod-sized objects in a Map, then
// `--writes` rewrites (parse the stored text, change the status, serialise, give the new
// resourceVersion, store, and record the event with its previous text in a ring of
// `--window`). Each variant runs in its own process under `--trace-gc-nvp` with the
// simulator's 64 MB semi-spaces; from its scavenges during the rewrites: the main thread's
// pause and the helper threads' time per 1,000 writes, bytes kept young and promoted per write,
// and the process's CPU per write (helpers included). Variants alternate for `--rounds`;
// medians per variant.
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { withResourceVersion } from '../src/sim/store/create-sim-store.js';
import { forkTs, nextMessage, runChild, runMain, SEMI_SPACE_FLAG } from './lib/children.js';
import { scavengesBetween } from './lib/gc-nvp.js';
import { median, round } from './lib/stats.js';

const ROLE = 'FA_STORE_STRINGS_ROLE';
const VARIANTS = ['flat', 'rope'] as const;
type Variant = (typeof VARIANTS)[number];
const START = 'FA-STORE-STRINGS-START';
const END = 'FA-STORE-STRINGS-END';

interface Config { objects: number; writes: number; window: number }

/** The text as the store built it before session 26: a template literal, so a rope. */
function ropeWithResourceVersion(json: string, from: string, to: string): string | undefined {
  const field = `"resourceVersion":"${from}"`;
  const at = json.indexOf(field);
  if (at < 0 || at !== json.lastIndexOf(field)) return undefined;
  return `${json.slice(0, at)}"resourceVersion":"${to}"${json.slice(at + field.length)}`;
}

/** A pod shaped like the simulator's (~1 KB of JSON). */
function pod(i: number, rv: number): object {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: `pod-${i}`, namespace: 'default', uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, resourceVersion: String(rv), creationTimestamp: '2026-11-23T10:00:00Z', labels: { app: 'fleet', shard: String(i % 100) } },
    spec: { nodeName: `node-${i % 5000}`, volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `pvc-${i}` } }], containers: [{ name: 'app', image: 'registry.example/app:1.2.3', volumeMounts: [{ name: 'data', mountPath: '/data' }] }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-23T10:00:00Z' }], containerStatuses: [{ name: 'app', ready: true, state: { running: { startedAt: '2026-11-23T10:00:00Z' } } }] },
  };
}

class Event {
  constructor(readonly rv: number, readonly json: string, readonly prevJson: string) {}
}

function child(variant: Variant, c: Config): void {
  const rewrite = variant === 'flat' ? withResourceVersion : ropeWithResourceVersion;
  const stored = new Map<string, string>();
  let rv = 0;
  for (let i = 0; i < c.objects; i++) stored.set(`default/pod-${i}`, JSON.stringify(pod(i, ++rv)));
  const ring = new Array<Event | undefined>(c.window).fill(undefined);
  let head = 0;
  const write = (w: number) => {
    const key = `default/pod-${(w * 7919) % c.objects}`;
    const before = stored.get(key)!;
    const o = JSON.parse(before) as { metadata: { resourceVersion: string }; status: { phase: string } };
    o.status.phase = w % 2 === 0 ? 'Pending' : 'Running';
    const next = String(++rv);
    const json = rewrite(JSON.stringify(o), o.metadata.resourceVersion, next)!;
    stored.set(key, json);
    ring[head] = new Event(rv, json, before);
    head = (head + 1) % c.window;
  };
  for (let w = 0; w < c.writes / 4; w++) write(w); // warm-up: code, the young generation's size
  console.log(START);
  const c0 = process.cpuUsage();
  for (let w = 0; w < c.writes; w++) write(w);
  const cpu = process.cpuUsage(c0);
  console.log(END);
  process.send?.({ cpuUsPerWrite: (cpu.user + cpu.system) / c.writes });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      objects: { type: 'string', default: '300000' },
      writes: { type: 'string', default: '400000' },
      window: { type: 'string', default: '100000' },
      rounds: { type: 'string', default: '4' },
      out: { type: 'string', default: fileURLToPath(new URL('./results/store-strings.json', import.meta.url)) },
    },
  });
  const cfg: Config = { objects: Number(values.objects), writes: Number(values.writes), window: Number(values.window) };
  const rounds = Number(values.rounds);
  for (const [k, v] of Object.entries({ ...cfg, rounds })) if (!Number.isInteger(v) || v <= 0) throw new Error(`--${k} must be a positive integer`);
  const self = fileURLToPath(import.meta.url);
  const runs: Record<Variant, Array<{ pauseMsPer1000: number; helperMsPer1000: number; survived: number; promoted: number; cpuUs: number }>> = { flat: [], rope: [] };
  for (let r = 0; r < rounds; r++) {
    for (const v of r % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) {
      const c = forkTs(self, ['--trace-gc-nvp', SEMI_SPACE_FLAG], { [ROLE]: JSON.stringify({ variant: v, ...cfg }) });
      const m = await nextMessage<{ cpuUsPerWrite: number }>(c, (x) => typeof x.cpuUsPerWrite === 'number', 600_000);
      await c.exited;
      const s = scavengesBetween(c.output(), START, END);
      if (s.count === 0) throw new Error(`${v}: no scavenge between the markers (output cut short?)`);
      runs[v].push({ pauseMsPer1000: (s.pauseMs / cfg.writes) * 1000, helperMsPer1000: (s.helperMs / cfg.writes) * 1000, survived: s.survived / cfg.writes, promoted: s.promoted / cfg.writes, cpuUs: m.cpuUsPerWrite });
      console.error(`round ${r + 1}/${rounds} ${v}: ${s.count} scavenges, pause ${round(s.pauseMs, 0)} ms, helpers ${round(s.helperMs, 0)} ms, CPU ${round(m.cpuUsPerWrite, 2)} µs/write`);
    }
  }
  type K = 'pauseMsPer1000' | 'helperMsPer1000' | 'survived' | 'promoted' | 'cpuUs';
  const med = (v: Variant, k: K) => median(runs[v].map((x) => x[k])) ?? NaN;
  const per = (v: Variant) => ({
    scavenge_pause_ms_per_1000_writes: round(med(v, 'pauseMsPer1000'), 2),
    scavenge_helper_ms_per_1000_writes: round(med(v, 'helperMsPer1000'), 2),
    young_survivor_bytes_per_write: round(med(v, 'survived'), 0),
    promoted_bytes_per_write: round(med(v, 'promoted'), 0),
    cpu_us_per_write: round(med(v, 'cpuUs'), 2),
  });
  const text = JSON.stringify({
    bench: 'store-strings',
    command: 'npm run bench:store-strings',
    date: new Date().toISOString(),
    machine: { cpus: availableParallelism(), node: process.version, loadavg_at_end: loadavg().map((l) => round(l, 2)) },
    config: { ...cfg, rounds, semi_space: SEMI_SPACE_FLAG },
    variants: { flat: per('flat'), rope: per('rope') },
    runs,
    scavenge_pause_flat_over_rope: round(med('flat', 'pauseMsPer1000') / med('rope', 'pauseMsPer1000'), 2),
    scavenge_helpers_flat_over_rope: round(med('flat', 'helperMsPer1000') / med('rope', 'helperMsPer1000'), 2),
    cpu_flat_over_rope: round(med('flat', 'cpuUs') / med('rope', 'cpuUs'), 2),
  }, null, 2);
  console.log(text);
  writeFileSync(values.out, `${text}\n`);
}

const role = process.env[ROLE];
if (role) {
  const c = JSON.parse(role) as Config & { variant: Variant };
  runChild(async () => {
    child(c.variant, c);
    process.exit(0);
  });
} else runMain(main);
