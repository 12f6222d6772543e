/**
 * One run of the peer bench: one controller, cold, against a freshly generated fleet (the same
 * seed every run), on the simulator or on a real kube-apiserver. Phases:
 *   fleet     sim: the simulator generates nodes × podsPerNode pods (PVC + PV each) with its
 *             attacher and kubelets; real: etcd + kube-apiserver start, then the same fleet is
 *             created through the API and played by the same actors (peer-fleet-child.ts);
 *   converge  the controller starts; done when every volume's VolumeAttachment is attached and
 *             every one is listed in its node's status.volumesAttached (or the timeout);
 *   churn     `churn` pod changes/s (the fleet's Churn actor) for `churnS` seconds: each new pod's
 *             volume from the pod's appearance to its VolumeAttachment's, on the fleet's store;
 *   settle    churn stopped, until every VolumeAttachment is attached and reported (capped);
 *   detach    every pod deleted at once (gracefully: the kubelets stop, unmount, finish the
 *             deletion): until no VolumeAttachment is left and no node lists a volume.
 * CPU seconds (cold start to convergence) and peak RSS (VmHWM, whole run) from /proc of the
 * controller process; API requests by `verb resource` over the whole run, counted by the
 * simulator (its request hook) or by the audit log of the real kube-apiserver (peer-real.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { forkTs, nextMessage, SEMI_SPACE_FLAG, type Child } from './children.js';
import { startController, type ControllerName, type ControllerProcess } from './peer-controllers.js';
import type { PeerFleetCommand, PeerFleetConfig, PeerFleetMessage, PeerFleetState } from './peer-fleet-child.js';
import { auditCounts, auditOffset, downPeerCluster, FLEET_ATTACH_USER, KCM_USER, upPeerCluster, type PeerCluster } from './peer-real.js';
import { sampleProcess, type ProcSampler } from './proc-stats.js';
import { phaseBar, stopAllBars } from './progress.js';
import { round } from './stats.js';

export interface PeerRunConfig {
  target: 'sim' | 'real';
  nodes: number;
  podsPerNode: number;
  seed: number;
  controller: ControllerName;
  /** Client qps and burst; undefined: the controller's shipped defaults. */
  qps?: number;
  burst?: number;
  convergeTimeoutS: number;
  churn: number;
  churnS: number;
  settleTimeoutS: number;
  detachTimeoutS: number;
  /** real: the fleet actors' own client qps (0: unlimited) and writes in flight. */
  fleetQps: number;
  fleetInFlight: number;
  extraArgs: readonly string[];
  /** Where the controller's and the fleet's logs are kept. */
  logDir: string;
}

/** The record of bench/results/peer.json (its shape is read by other tools: keep it). */
export interface PeerRun {
  target: 'sim' | 'real';
  nodes: number;
  pods: number;
  controller: ControllerName;
  qps: number;
  converge_s: number | null;
  cpu_s: number | null;
  peak_rss_mb: number | null;
  pod_to_va_p50_ms: number | null;
  pod_to_va_p99_ms: number | null;
  detach_all_s: number | null;
  api_requests: Record<string, number> | null;
  note: string | null;
}

const CHILD = new URL('./peer-fleet-child.ts', import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const since = (t: number) => (performance.now() - t) / 1000;

function ask<T extends PeerFleetMessage['type']>(child: Child, command: PeerFleetCommand, timeoutMs = 120_000): Promise<Extract<PeerFleetMessage, { type: T }>> {
  const reply = nextMessage<PeerFleetMessage>(child, (m) => m.type === command.type && (command.type !== 'pod-va' || (m as { op?: string }).op === command.op), timeoutMs);
  child.process.send(command);
  return reply as Promise<Extract<PeerFleetMessage, { type: T }>>;
}

const state = async (child: Child): Promise<PeerFleetState> => (await ask<'state'>(child, { type: 'state' })).state;

/** Polls the fleet's state until `done`, the deadline, or the controller's exit. */
async function waitFor(child: Child, ctl: ControllerProcess, what: string, total: number, progress: (s: PeerFleetState) => number, done: (s: PeerFleetState) => boolean, timeoutS: number): Promise<{ ok: boolean; s: number; last: PeerFleetState }> {
  const bar = phaseBar(what, total, '');
  const t0 = performance.now();
  for (;;) {
    const s = await state(child);
    bar.update(Math.min(total, progress(s)), `node status ${s.nodeStatus}  VAs ${s.volumeAttachments} (attached ${s.attached})  pods ${s.pods} (terminating ${s.terminating})`);
    if (done(s)) {
      bar.done('done');
      return { ok: true, s: since(t0), last: s };
    }
    if (since(t0) > timeoutS) {
      bar.done('TIMED OUT');
      return { ok: false, s: since(t0), last: s };
    }
    if (ctl.process.exitCode !== null || ctl.process.signalCode !== null) {
      bar.done('controller exited');
      throw new Error(`controller exited (${ctl.process.exitCode ?? ctl.process.signalCode}) during ${what}:\n${ctl.output().slice(-3000)}`);
    }
    await sleep(250);
  }
}

export async function runPeer(cfg: PeerRunConfig): Promise<PeerRun> {
  const dir = mkdtempSync(join(tmpdir(), 'fa-peer-'));
  const expected = cfg.nodes * cfg.podsPerNode;
  const heapMb = cfg.nodes >= 50_000 ? 8192 : 4096;
  const notes: string[] = [];
  const out: PeerRun = {
    target: cfg.target, nodes: cfg.nodes, pods: expected, controller: cfg.controller, qps: cfg.qps ?? 20,
    converge_s: null, cpu_s: null, peak_rss_mb: null, pod_to_va_p50_ms: null, pod_to_va_p99_ms: null, detach_all_s: null, api_requests: null, note: null,
  };
  let child: Child | undefined;
  let ctl: ControllerProcess | undefined;
  let proc: ProcSampler | undefined;
  let cluster: PeerCluster | undefined;
  let auditFrom = 0;
  const tag = `${cfg.target}-${cfg.nodes}-${cfg.controller}-${cfg.qps ?? 'default'}`;
  try {
    // ---- fleet ----
    const fleetBar = phaseBar('fleet', cfg.nodes, 'nodes');
    const tFleet = performance.now();
    let fleetCfg: PeerFleetConfig;
    let controllerKubeconfig: string;
    if (cfg.target === 'sim') {
      controllerKubeconfig = join(dir, 'kubeconfig');
      fleetCfg = { mode: 'sim', nodes: cfg.nodes, podsPerNode: cfg.podsPerNode, seed: cfg.seed, kubeconfigOut: controllerKubeconfig };
    } else {
      cluster = await upPeerCluster(join(dir, 'cluster'));
      controllerKubeconfig = cfg.controller === 'fleet-attach' ? cluster.controllerKubeconfig : cluster.kcmKubeconfig;
      fleetCfg = { mode: 'remote', nodes: cfg.nodes, podsPerNode: cfg.podsPerNode, seed: cfg.seed, kubeconfig: cluster.adminKubeconfig, qps: cfg.fleetQps, maxInFlight: cfg.fleetInFlight };
    }
    child = forkTs(CHILD, [`--max-old-space-size=${heapMb}`, SEMI_SPACE_FLAG], { FA_PEER_FLEET: JSON.stringify(fleetCfg), LOG_LEVEL: 'warn' });
    child.process.on('message', (m: PeerFleetMessage) => m.type === 'progress' && fleetBar.update(m.done));
    await nextMessage<PeerFleetMessage>(child, (m) => m.type === 'ready', 60 * 60_000);
    fleetBar.done(`${round(since(tFleet))} s`);
    const s0 = await state(child);
    if (s0.pods !== expected) notes.push(`fleet has ${s0.pods} pods, expected ${expected}`);
    if (cfg.target === 'sim') await ask<'counts'>(child, { type: 'counts', reset: true });
    else auditFrom = auditOffset(cluster!);

    // ---- converge (cold start) ----
    const t0 = performance.now();
    ctl = await startController({ controller: cfg.controller, kubeconfig: controllerKubeconfig, qps: cfg.qps, burst: cfg.burst, jsonOnly: cfg.target === 'sim', dir, heapMb, extraArgs: cfg.extraArgs });
    proc = sampleProcess(ctl.pid);
    const conv = await waitFor(child, ctl, 'converge', expected, (s) => Math.min(s.attached, s.nodeStatus), (s) => s.attached >= expected && s.nodeStatus >= expected, cfg.convergeTimeoutS);
    const convSample = proc.last();
    if (!conv.ok) {
      const { attached, nodeStatus } = conv.last;
      const rate = attached / conv.s;
      notes.push(`convergence timed out after ${Math.round(conv.s)} s: ${attached} of ${expected} VolumeAttachments attached (${round(rate, 1)}/s; at that rate all would be attached after ~${rate > 0 ? Math.round(expected / rate) : '∞'} s), ${nodeStatus} volumes in node status; churn and detach not measured; cpu_s is the CPU used until the timeout`);
      out.cpu_s = round(convSample.cpuS);
      return out;
    }
    out.converge_s = round(since(t0));
    out.cpu_s = round(convSample.cpuS);

    // ---- churn ----
    if (cfg.churnS > 0 && cfg.churn > 0) {
      await ask(child, { type: 'pod-va', op: 'start' });
      const started = await ask<'churn'>(child, { type: 'churn', rate: cfg.churn });
      if (!started.started) throw new Error('churn did not start');
      await ask(child, { type: 'pod-va', op: 'begin' });
      const bar = phaseBar('churn', cfg.churnS, 's');
      const tc = performance.now();
      while (since(tc) < cfg.churnS) {
        await sleep(Math.min(1000, Math.max(0, cfg.churnS * 1000 - (performance.now() - tc))));
        if (ctl.process.exitCode !== null) throw new Error(`controller exited during churn:\n${ctl.output().slice(-3000)}`);
        bar.update(Math.floor(since(tc)));
      }
      await ask(child, { type: 'pod-va', op: 'end' });
      await ask(child, { type: 'churn-stop' });
      await sleep(3000); // the VolumeAttachments of the window's last pods
      bar.done();
      const r = (await ask<'pod-va'>(child, { type: 'pod-va', op: 'result' }) as Extract<PeerFleetMessage, { type: 'pod-va'; op: 'result' }>).result;
      await ask(child, { type: 'pod-va', op: 'stop' });
      out.pod_to_va_p50_ms = round(r.podToVaMs.p50, 1) ?? null;
      out.pod_to_va_p99_ms = round(r.podToVaMs.p99, 1) ?? null;
      notes.push(`churn ${cfg.churn}/s for ${cfg.churnS} s: ${r.volumes} new-pod volumes timed, ${r.matched} got their VolumeAttachment${r.podToVaMs.p50AtLeast || r.podToVaMs.p99AtLeast ? ` (p50${r.podToVaMs.p99AtLeast ? '/p99' : ''} counts volumes still waiting: a lower bound)` : ''}`);

      // ---- settle ----
      const settled = await waitFor(child, ctl, 'settle', 1, () => 0, (s) => s.terminating === 0 && s.attached === s.volumeAttachments && s.nodeStatus === s.attached, cfg.settleTimeoutS);
      if (!settled.ok) notes.push(`not settled ${cfg.settleTimeoutS} s after churn (node status ${settled.last.nodeStatus}, VAs ${settled.last.volumeAttachments}, attached ${settled.last.attached})`);
    }

    // ---- detach everything ----
    const before = await state(child);
    const td = performance.now();
    const del = await ask<'delete-pods'>(child, { type: 'delete-pods' }, 10 * 60_000);
    const det = await waitFor(child, ctl, 'detach', before.volumeAttachments, (s) => before.volumeAttachments - s.volumeAttachments, (s) => s.volumeAttachments === 0 && s.nodeStatus === 0, cfg.detachTimeoutS);
    if (det.ok) out.detach_all_s = round(since(td));
    notes.push(det.ok
      ? `detach: ${del.deleted} pods deleted (${del.ms} ms to ask), ${before.volumeAttachments} VolumeAttachments gone`
      : `detach timed out after ${Math.round(det.s)} s: ${det.last.volumeAttachments} of ${before.volumeAttachments} VolumeAttachments left, ${det.last.nodeStatus} in node status`);

    // ---- the count, the peak, stop ----
    out.peak_rss_mb = Math.round(proc.last().peakRssMb);
    return out;
  } catch (err) {
    notes.push(`failed: ${err instanceof Error ? err.message.slice(0, 1500) : String(err)}`);
    if (proc) out.peak_rss_mb = Math.round(proc.last().peakRssMb);
    return out;
  } finally {
    stopAllBars();
    if (proc && out.peak_rss_mb === null) out.peak_rss_mb = Math.round(proc.last().peakRssMb);
    proc?.stop();
    if (child && child.process.exitCode === null) {
      try {
        if (cfg.target === 'sim') out.api_requests = (await ask<'counts'>(child, { type: 'counts', reset: false })).counts;
      } catch {
        // no count
      }
    }
    await ctl?.stop(20_000);
    if (cluster) {
      try {
        out.api_requests = auditCounts(cluster, cfg.controller === 'fleet-attach' ? FLEET_ATTACH_USER : KCM_USER, auditFrom);
      } catch (err) {
        notes.push(`audit count failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (ctl) writeFileSync(join(cfg.logDir, `${tag}-controller.log`), ctl.output());
    if (child) writeFileSync(join(cfg.logDir, `${tag}-fleet.log`), child.output());
    await child?.stop(10_000);
    if (cluster) await downPeerCluster(cluster.dir).catch(() => {});
    notes.push(`load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} at the end`);
    out.note = notes.join('; ');
    rmSync(dir, { recursive: true, force: true });
  }
}
