/**
 * Measures the populator's share of a pod add (volume resolution, pod tracking, interning into
 * the world state) without the API server or the reflector: pods, claims and PVs are projected
 * up front from the simulator's object builders, then `addAllPods` (A4, the start-up fill's work in one block) runs
 * over a fresh state (after `start`), and again over the filled state (C10, every pod already desired), then
 * `removeStalePods` (C9, every pod present: the once-a-minute check finds nothing to do). Not a
 * test (no assertions; numbers depend on the machine): run it by hand, e.g.
 *   LOG_LEVEL=warn node --expose-gc --import tsx test/populator/process-pod.measure.ts 10000 7
 * A second populator (e.g. a copy of an older commit's src/populator in a tree whose other
 * folders are symlinks to this one) is measured side by side, rounds interleaved, with
 *   ... process-pod.measure.ts 10000 7 /tmp/before/src/populator/desired-state-populator.ts
 * Times are process CPU time (includes GC on helper threads). Profile with
 * `node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx ...` (MEASURE_FILL_ONLY=1: no re-pass).
 */
import { createWorldState } from '../../src/cache/world-state.js';
import { projectNode, projectPod, projectPv, projectPvc, type NodeRecord, type PodRecord, type PvRecord, type PvcRecord } from '../../src/kube/projections/index.js';
import type { ProjectionHandler } from '../../src/kube/projection-store.js';
import { createCsiPlugin, createCsiTranslator, createVolumePluginManager } from '../../src/plugins/index.js';
import { nodeObject, podObject, pvObject, pvcObject } from '../../src/sim/actors/objects.js';
import { loadActualState } from '../../src/populator/actual-state-loader.js';
import type { createDesiredStatePopulator as Create, Source } from '../../src/populator/desired-state-populator.js';
import { logger } from '../../src/log/logger.js';

const podCount = Number(process.argv[2] ?? 10_000);
const rounds = Number(process.argv[3] ?? 7);
const modules = [new URL('../../src/populator/desired-state-populator.ts', import.meta.url).href, ...process.argv.slice(4).map((p) => new URL(p, `file://${process.cwd()}/`).href)];
const PODS_PER_NODE = 10;
const DRIVER = 'measure.csi.fleet-attach.io';

function source<T>(entries: Array<[string, T]>): Source<T> {
  const m = new Map(entries);
  return { get: (k) => m.get(k), values: () => m.values(), addHandler: (_h: ProjectionHandler<T>) => () => undefined };
}
function ok<T>(r: { ok: true; value: T } | { ok: false }): T {
  if (!r.ok) throw new Error('projection failed');
  return r.value;
}

const now = new Date().toISOString();
const nodes: NodeRecord[] = [];
const pods: PodRecord[] = [];
const pvcs: PvcRecord[] = [];
const pvs: PvRecord[] = [];
for (let i = 0; i < podCount; i++) {
  const nodeName = `node-${Math.floor(i / PODS_PER_NODE)}`;
  if (i % PODS_PER_NODE === 0) nodes.push(ok(projectNode(nodeObject(nodeName, now))));
  const ns = `ns-${i % 50}`;
  const pvcUid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  const claim = pvcObject(ns, `claim-${i}`, `pv-${i}`, false);
  claim.metadata.uid = pvcUid;
  const pv = pvObject(`pv-${i}`, DRIVER, `handle-${i}`, false, { namespace: ns, name: `claim-${i}`, uid: pvcUid });
  pv.metadata.uid = `10000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  const pod = podObject(ns, `pod-${i}`, nodeName, [`claim-${i}`], now);
  pod.metadata.uid = `20000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  pvcs.push(ok(projectPvc(claim)));
  pvs.push(ok(projectPv(pv)));
  pods.push(ok(projectPod(pod)));
}
const srcs = {
  pods: source(pods.map((p) => [`${p.namespace}/${p.name}`, p] as [string, PodRecord])),
  pvcs: source(pvcs.map((c) => [`${c.namespace}/${c.name}`, c] as [string, PvcRecord])),
  pvs: source(pvs.map((v) => [v.name, v] as [string, PvRecord])),
  nodes: source(nodes.map((n) => [n.name, n] as [string, NodeRecord])),
};
const log = logger('measure');
const csi = createCsiPlugin({
  api: { create: async () => 'created', delete: async () => 'deleted' },
  attachments: { get: () => undefined, onChange: () => () => undefined },
  drivers: { attachRequired: () => true },
});
const plugins = createVolumePluginManager({ plugins: [csi] });
const translator = createCsiTranslator({ isMigrated: () => false });

async function once(create: typeof Create): Promise<{ fill: number; repass: number; stale: number; desired: number }> {
  const state = createWorldState({});
  loadActualState({ state, nodes: srcs.nodes.values(), volumeAttachments: [], pv: (n) => srcs.pvs.get(n), plugins, translator, log });
  const p = create({ state, ...srcs, plugins, translator, populatorPeriodMs: 3_600_000, listPodsPeriodMs: 3_600_000, log });
  // CPU time of this process, not wall time: the machine is shared, so waits for a core are not ours.
  const cpuMs = (since: NodeJS.CpuUsage) => {
    const u = process.cpuUsage(since);
    return (u.user + u.system) / 1000;
  };
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.(); // with --expose-gc: earlier rounds' garbage is not collected on this round's clock
  let t = process.cpuUsage();
  p.start(); // subscribes, and indexes the listed claims
  p.addAllPods();
  const fill = cpuMs(t);
  gc?.();
  t = process.cpuUsage();
  if (process.env.MEASURE_FILL_ONLY !== '1') p.addAllPods();
  const repass = cpuMs(t);
  gc?.();
  t = process.cpuUsage();
  if (process.env.MEASURE_FILL_ONLY !== '1') p.removeStalePods();
  const stale = cpuMs(t);
  p.stop();
  return { fill, repass, stale, desired: state.counts().desiredPairs };
}

const impls: Array<typeof Create> = [];
for (const m of modules) impls.push(((await import(m)) as { createDesiredStatePopulator: typeof Create }).createDesiredStatePopulator);
const results = modules.map(() => ({ fill: [] as number[], repass: [] as number[], stale: [] as number[], desired: 0 }));
for (let r = 0; r < rounds + 1; r++) {
  for (let i = 0; i < impls.length; i++) {
    const x = await once(impls[i]!);
    if (r === 0) continue; // warm-up round
    results[i]!.fill.push(x.fill);
    results[i]!.repass.push(x.repass);
    results[i]!.stale.push(x.stale);
    results[i]!.desired = x.desired;
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const us = (ms: number) => ((ms * 1000) / podCount).toFixed(2);
for (let i = 0; i < modules.length; i++) {
  const res = results[i]!;
  const f = median(res.fill), rp = median(res.repass), st = median(res.stale);
  console.log(`${i === 0 ? 'current' : modules[i]}: pods=${podCount} desired=${res.desired} fill median ${f.toFixed(1)} ms (${us(f)} µs/pod, min ${Math.min(...res.fill).toFixed(1)}) re-pass median ${rp.toFixed(1)} ms (${us(rp)} µs/pod, min ${Math.min(...res.repass).toFixed(1)}) C9 median ${st.toFixed(1)} ms (${us(st)} µs/pod, min ${Math.min(...res.stale).toFixed(1)}) rounds=${rounds}`);
}
