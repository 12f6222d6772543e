/**
 * fleet-attach against a real kube-apiserver (upstream etcd + kube-apiserver of
 * upstream/bin, real-cluster.ts), at fleet size, through faults.
 *
 * - The fleet: 500 nodes × 10 pods, each pod with its own bound PVC/PV (10% ReadWriteMany),
 *   created through the API by the simulator's remote fleet (src/sim/remote, what
 *   `fleet-attach sim --actors-only` runs) under the admin kubeconfig; its kubelet and CSI
 *   external-attacher actors play the parts around the controller over the API.
 * - The controller: `fleet-attach run` as a child process (the package's bin), under
 *   controller.kubeconfig, i.e. the ServiceAccount of deploy/rbac.yaml with a TokenRequest
 *   token, with leader election on as deployed. Supervised as a Deployment would: an instance
 *   that exits by itself (lost lease) is started again, and that is reported.
 * - The judge: the test's own list+watch of pods, nodes, claims, volumes, CSI drivers and
 *   VolumeAttachments (admin kubeconfig), fed into the invariant checker (src/invariants) for
 *   the whole run, reconnecting by itself after the kube-apiserver restart.
 *
 * Phases: population and convergence (every desired pair attached — VolumeAttachment
 * status.attached — and in its node's status.volumesAttached; the controller's own summary
 * agrees); pod churn at 10 changes/s, on until the end (real-api/churn.ts: the fleet churn
 * actor's changes, but each follow-up ordered after the server's deletion of the pod — see there
 * why not the actor itself); node failures (Ready=False on 20 nodes; pods force-deleted off 5 of
 * them, detached only after --max-wait-for-unmount; the out-of-service taint on 2 others, their
 * pods moved elsewhere; then recovery); a SIGKILL of the controller and a fresh instance; a
 * kube-apiserver restart (real-api/restart.ts: SIGTERM, SIGKILL after 10 s, the same command
 * line again). Then, with churn stopped: converged again, zero invariant violations, the
 * watcher's view equal to a fresh list, every pod's volume attached and reported as read from
 * the API objects, and no 403 (nor 401) answer to the controller, in its metrics or its log: a
 * permission the code needs and deploy/rbac.yaml lacks fails the test.
 *
 * Every wait has a deadline that fails the test; nothing asserts on elapsed time. The phase
 * times are printed. FA_REAL_NODES sizes the fleet down for a quick run (default 500).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFleetActors, type FleetActors } from '../../src/sim/actors/index.js';
import { podClaimNames, pvcVolumeName, pvCsiSource, vaSpec } from '../../src/sim/actors/fields.js';
import { FLEET_NAMESPACE, uniqueVolumeName, volumeAttachmentName } from '../../src/sim/actors/names.js';
import { DEFAULT_MIRROR, DEFAULT_NODE_SELECTOR, createRemoteStore, populateRemoteFleet, withNodeSelector, type RemotePopulation, type RemoteStore } from '../../src/sim/remote/index.js';
import type { KubeObject } from '../../src/sim/store/sim-store.js';
import { WATCHED, diffVersions, startApiWatcher, versions, type ApiWatcher, type WatchedObjects } from './real-api/api-watcher.js';
import { ControllerProcess } from './real-api/controller-process.js';
import { forceDeletePod, livePodsByNode, readyNodes, setOutOfService, setReady } from './real-api/node-faults.js';
import { restartApiserver } from './real-api/restart.js';
import { ServerOrderedChurn } from './real-api/churn.js';
import { granted, parseRefusal, type Refusal } from './real-api/forbidden.js';
import { down, up, type RealCluster } from './real-cluster.js';

const NODES = Number(process.env.FA_REAL_NODES ?? 500);
const PODS_PER_NODE = 10;
const SEED = 41;
const DRIVER = 'sim.csi.fleet-attach.io';
/** The controller's --max-wait-for-unmount, and the checker's. */
const MAX_WAIT_MS = 20_000;
/** The checker's (e): how long after faults stop a desired pair may stay unattached. */
const CONVERGENCE_BOUND_MS = 150_000;
const CHURN_PER_SECOND = 10;
/**
 * The population is ~48,000 API calls (each object created, then its status written, plus the
 * attacher's and kubelets' writes as the controller attaches): about 200 calls/s when this
 * 2-core machine is shared with other work, several times that when it is not.
 */
const POPULATION_DEADLINE_MS = 600_000;
/** After a restarted kube-apiserver's /readyz, how long a 403 may still be its authorizer syncing (and a metrics scrape late). */
const RBAC_SYNC_GRACE_MS = 30_000;
const FAILED_NODES = 20;
/** Of the failed nodes: pods force-deleted without the taint (timer detach), and out-of-service ones. */
const TIMER_NODES = 5;
const OOS_NODES = 2;
const FORCE_DELETED_PER_TIMER_NODE = 2;

const CONTROLLER_ARGS = [
  '--max-wait-for-unmount', `${MAX_WAIT_MS / 1000}s`,
  // A 500-node cluster's controller gets a client rate to match (upstream's default of 20/s
  // would take minutes for 5,000 attaches); leader election stays on, as deployed.
  '--kube-api-qps', '1000', '--kube-api-burst', '2000',
  '--leader-elect=true',
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until true; fails with `detail()` once `timeoutMs` passed. Returns the ms it took. */
async function until(what: string, timeoutMs: number, probe: () => boolean | Promise<boolean>, detail: () => string | Promise<string> = () => '', everyMs = 500): Promise<number> {
  const t0 = performance.now();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return performance.now() - t0;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${Math.round(timeoutMs / 1000)} s. ${await detail()}`);
    await sleep(everyMs);
  }
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

interface Summary {
  ready: boolean;
  role: string;
  pairs: { desired: number; desiredAttached: number; attached: number; reportedAsAttached: number };
}

describe('fleet-attach against a real kube-apiserver: 500 nodes × 10 pods, churn, node failures, controller SIGKILL, apiserver restart', () => {
  let dir = '';
  let cluster: RealCluster | undefined;
  let watcher: ApiWatcher | undefined;
  let ctl: ControllerProcess | undefined;
  let fleetStore: RemoteStore | undefined;
  let actors: FleetActors | undefined;
  let population: RemotePopulation | undefined;
  let churn: ServerOrderedChurn | undefined;
  /** When kube-apiserver was restarting: from the stop to some time after /readyz (403s there are its RBAC caches syncing). */
  const restartWindows: Array<{ from: number; to: number }> = [];
  let failedPhase: string | undefined;
  const phases: Array<[string, string]> = [];
  const phase = (name: string, value: string) => {
    phases.push([name, value]);
    console.log(`[phase] ${name}: ${value}`);
  };

  /** Runs a phase body unless an earlier phase failed (then it is skipped: its premise is gone). */
  const step = (name: string, body: () => Promise<void>) => async (t: { skip(msg?: string): void }) => {
    if (failedPhase) {
      t.skip(`phase "${failedPhase}" failed`);
      return;
    }
    try {
      await body();
    } catch (err) {
      failedPhase = name;
      throw err;
    }
  };

  const summary = () => ctl?.get<Summary>('/api/v1/summary') ?? Promise.resolve(undefined);

  /** The watcher's convergence and the controller's summary agree that every desired pair is attached and reported. */
  const converged = async (): Promise<boolean> => {
    const c = watcher!.checker.convergence();
    if (!c.converged || c.desired === 0) return false;
    const s = await summary();
    return s !== undefined && s.role === 'leader' && s.pairs.desired === c.desired && s.pairs.desiredAttached === c.desired;
  };
  const convergenceDetail = async () => `watcher: ${JSON.stringify(watcher?.checker.convergence())} (${watcher?.feed.pending()} changes held, VolumeAttachments waiting for their PV: ${JSON.stringify(watcher?.feed.waiting().slice(0, 5))}; undesired VolumeAttachments: ${JSON.stringify(watcher ? strayAttachments(watcher).slice(0, 5) : [])}); controller: ${JSON.stringify((await summary())?.pairs ?? 'no answer')}; fleet: ${JSON.stringify(fleetStore?.stats())}`;

  /** Pauses churn, waits for convergence (deadline: fails), resumes churn; returns the ms it took. */
  const convergeWithChurnPaused = async (what: string): Promise<number> => {
    churn!.pause();
    try {
      return await until(`convergence ${what} (churn paused)`, 240_000, converged, convergenceDetail, 1000);
    } finally {
      churn!.resume();
    }
  };

  /** The current controller instance leads and has filled its state. */
  const acting = async (): Promise<boolean> => {
    const s = await summary();
    return s?.ready === true && s.role === 'leader';
  };

  before(async () => {
    // The bin runs dist/: build it when older than src/ (as the e2e tests do).
    execFileSync(process.execPath, [new URL('../../scripts/ensure-build.js', import.meta.url).pathname], { stdio: 'inherit' });
    dir = await mkdtemp(join(tmpdir(), 'fa-real-api-'));
    const t0 = performance.now();
    cluster = await up({ dir });
    phase('cluster up (etcd + kube-apiserver)', secs(performance.now() - t0));
    watcher = await startApiWatcher({ kubeconfig: cluster.adminKubeconfig, maxWaitForUnmountMs: MAX_WAIT_MS, convergenceBoundMs: CONVERGENCE_BOUND_MS });
  });

  after(async () => {
    console.log(`[phases]\n${phases.map(([k, v]) => `  ${k}: ${v}`).join('\n')}`);
    if (watcher) {
      const v = watcher.checker.violations();
      console.log(`[invariants] counts ${JSON.stringify(watcher.checker.counts())}, operations ${JSON.stringify(watcher.checker.operations())}, feed ${JSON.stringify(watcher.feed.counters)}`);
      for (const x of v.slice(0, 20)) console.log(`  ${x.kind} ${x.volume} ${x.nodes.join(',')}: ${x.detail}`);
    }
    if (ctl) console.log(`[controller] instances ${ctl.instances.length}, exits by itself ${JSON.stringify(ctl.unexpectedExits.map((e) => ({ n: e.n, exit: e.exit })))}`);
    // Every process, whatever failed: the controller, the fleet, the watcher, then the cluster.
    churn?.halt();
    await ctl?.stop().catch((err) => console.log(`stopping the controller: ${String(err)}`));
    await actors?.stop().catch(() => {});
    await fleetStore?.close({ flushMs: 0 }).catch(() => {});
    await watcher?.stop().catch(() => {});
    if (dir) {
      await down(dir).catch((err) => console.log(`down: ${String(err)}`));
      // Kept after a failure, for the logs (controller-N.log, kube-apiserver.log, etcd.log).
      if (failedPhase) console.log(`[logs] kept in ${dir}`);
      else await rm(dir, { recursive: true, force: true });
    }
  });

  it('populates the fleet through the API and converges under the restricted ServiceAccount', { timeout: 1_000_000 }, step('population and convergence', async () => {
    const c = cluster!;
    ctl = new ControllerProcess({ dir, kubeconfig: c.controllerKubeconfig, args: CONTROLLER_ARGS });
    ctl.start();
    const tLead = await until('the controller leads (empty cluster)', 90_000, acting, async () => ctl!.grepLogs(/./).slice(-10).map((l) => l.line).join('\n'));
    phase('controller start to leading', secs(tLead));

    // What startRemoteFleet does (remote store, actors, then the population), with the pieces
    // kept so that `after` can stop them whatever happens during the population.
    // Node Leases renewed every 5 min, not 10 s: nothing here reads them (no node lifecycle
    // controller), and 500 renewals every 10 s would be a third of what this shared machine's
    // kube-apiserver serves.
    const fleet = { seed: SEED, nodes: NODES, podsPerNode: PODS_PER_NODE, driver: DRIVER, leaseRenewMs: 300_000 };
    fleetStore = await createRemoteStore({
      kubeconfig: { path: c.adminKubeconfig },
      resources: withNodeSelector(DEFAULT_MIRROR, DEFAULT_NODE_SELECTOR),
      qps: 2000, burst: 4000, maxInFlight: 64,
    });
    actors = startFleetActors(fleetStore, fleet);
    const t0 = performance.now();
    let lastProgress = 0;
    const populating = populateRemoteFleet(fleetStore, fleet, {
      onProgress: (done, total) => {
        if (done - lastProgress >= 100 || done === total) {
          lastProgress = done;
          console.log(`  population: ${done}/${total} nodes queued after ${secs(performance.now() - t0)}, ${fleetStore?.stats().requests} requests`);
        }
      },
    });
    let timer: NodeJS.Timeout | undefined;
    population = await Promise.race([
      populating,
      new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error(`population not done within ${POPULATION_DEADLINE_MS / 1000} s: ${JSON.stringify(fleetStore?.stats())}`)), POPULATION_DEADLINE_MS))),
    ]).finally(() => clearTimeout(timer));
    phase('population (API writes done)', `${secs(performance.now() - t0)}; ${JSON.stringify(population)}; ${fleetStore.stats().requests} requests`);
    assert.equal(population.pods, NODES * PODS_PER_NODE);
    assert.equal(population.errors, 0, 'writes of the population that failed for good');

    const tConv = await until('convergence after the population', 300_000, converged, convergenceDetail, 1000);
    const conv = watcher!.checker.convergence();
    phase('convergence after the population', `${secs(tConv)} more (${secs(performance.now() - t0)} from the population's start); ${conv.attached}/${conv.desired} pairs`);
    assert.equal(conv.desired, NODES * PODS_PER_NODE);
    assert.deepEqual(watcher!.checker.violations(), []);
  }));

  it('keeps the invariants through pod churn and node failures (timer detach, out-of-service detach, recovery)', { timeout: 600_000 }, step('churn and node failures', async () => {
    const store = fleetStore!;
    const w = watcher!;
    churn = new ServerOrderedChurn({
      store, view: w, rate: CHURN_PER_SECOND, targetPods: NODES * PODS_PER_NODE, driver: DRIVER, rwxFraction: 0.1, seed: SEED,
      pods: store.list('pods', FLEET_NAMESPACE).map((p) => p.metadata.name),
    });
    await sleep(10_000);
    const t0 = performance.now();

    // 20 Ready nodes spread over the fleet fail (Ready=False); the simulated kubelets of
    // NotReady nodes stop acting.
    const ready = readyNodes(store);
    const stride = Math.max(1, Math.floor(ready.length / FAILED_NODES));
    const failed = ready.filter((_, i) => i % stride === Math.floor(stride / 2)).slice(0, FAILED_NODES);
    for (const n of failed) assert.ok(setReady(store, n, false), `node ${n} set NotReady`);
    await until('the watcher sees the failed nodes NotReady', 60_000, () => failed.every((n) => w.get('nodes', undefined, n) && !isReady(w.get('nodes', undefined, n)!)));

    // Timer nodes: some pods force-deleted, not recreated; their volumes stay in volumesInUse
    // (the kubelet is down), so the controller may detach them only after max-wait.
    // Out-of-service nodes: tainted, every pod force-deleted and recreated on a healthy node.
    const timerNodes = failed.slice(0, TIMER_NODES);
    const oosNodes = failed.slice(TIMER_NODES, TIMER_NODES + OOS_NODES);
    const healthy = ready.filter((n) => !failed.includes(n));
    const byNode = livePodsByNode(store);
    const timerPairs: Array<{ node: string; va: string }> = [];
    for (const n of timerNodes) {
      for (const pod of (byNode.get(n) ?? []).slice(0, FORCE_DELETED_PER_TIMER_NODE)) {
        for (const va of vaNamesOf(store, pod, n)) timerPairs.push({ node: n, va });
        forceDeletePod(store, pod);
      }
    }
    let moved = 0;
    for (const [i, n] of oosNodes.entries()) {
      assert.ok(setOutOfService(store, n, true), `node ${n} tainted out-of-service`);
      for (const [j, pod] of (byNode.get(n) ?? []).entries()) {
        forceDeletePod(store, pod, healthy[(i * 97 + j * 31) % healthy.length]);
        moved++;
      }
    }
    const tDetach = await until('force-deleted pods\' volumes detached off the failed nodes (timer and out-of-service)', MAX_WAIT_MS + 120_000, () => {
      const left = timerPairs.filter((p) => w.get('volumeattachments', undefined, p.va) !== undefined).length;
      const onOos = w.list('volumeattachments').filter((va) => oosNodes.includes(vaSpec(va)?.nodeName ?? '')).length;
      return left === 0 && onOos === 0;
    }, () => {
      const left = timerPairs.filter((p) => w.get('volumeattachments', undefined, p.va) !== undefined);
      const onOos = w.list('volumeattachments').filter((va) => oosNodes.includes(vaSpec(va)?.nodeName ?? '')).map((va) => va.metadata.name);
      return `timer-detach VolumeAttachments left: ${left.length}/${timerPairs.length}; on out-of-service nodes: ${onOos.length}`;
    });
    phase('node failures: force-deleted pods\' volumes detached', `${secs(tDetach)} (${timerPairs.length} by the ${MAX_WAIT_MS / 1000} s timer on ${timerNodes.length} nodes, ${moved} pods moved off ${oosNodes.length} out-of-service nodes)`);
    await sleep(5_000);

    for (const n of oosNodes) assert.ok(setOutOfService(store, n, false), `node ${n} untainted`);
    for (const n of failed) assert.ok(setReady(store, n, true), `node ${n} Ready again`);
    await until('the watcher sees the failed nodes Ready again', 60_000, () => failed.every((n) => isReady(w.get('nodes', undefined, n))));
    phase('node failures: total (failure to recovery)', secs(performance.now() - t0));
    const tConv = await convergeWithChurnPaused('after the node failures');
    phase('node failures: convergence after recovery', `${secs(tConv)}; ${w.checker.convergence().desired} pairs`);
    assert.deepEqual(w.checker.violations(), []);
  }));

  it('recovers from a SIGKILL of the controller (a fresh instance takes the lease over)', { timeout: 600_000 }, step('controller SIGKILL', async () => {
    const w = watcher!;
    const c = ctl!;
    const killed = await c.kill('SIGKILL');
    const t0 = performance.now();
    const attachesBefore = w.checker.operations().attaches;
    c.start();
    const tLead = await until('a fresh controller instance leads after the SIGKILL', 120_000, acting, () => c.grepLogs(/leader|lease/i).slice(-5).map((l) => l.line).join('\n'));
    await until('the fresh instance attaches the churn\'s new volumes', 120_000, () => w.checker.operations().attaches >= attachesBefore + 20, async () => `attaches ${w.checker.operations().attaches - attachesBefore}; ${await convergenceDetail()}`);
    phase('controller SIGKILL: fresh instance leading', `${secs(tLead)} (instance ${killed.n} killed, lease expiry included); acting on churn after ${secs(performance.now() - t0)}`);
    const tConv = await convergeWithChurnPaused('after the controller SIGKILL');
    phase('controller SIGKILL: convergence', `${secs(tConv)} more (${secs(performance.now() - t0)} from the kill); ${w.checker.convergence().desired} pairs`);
    assert.deepEqual(w.checker.violations(), []);
  }));

  it('recovers from a kube-apiserver restart mid-run (controller, fleet and watcher reconnect)', { timeout: 600_000 }, step('kube-apiserver restart', async () => {
    const w = watcher!;
    const c = ctl!;
    const store = fleetStore!;
    const instancesBefore = c.instances.length;
    const t0 = performance.now();
    const from = Date.now();
    const window = { from, to: Number.POSITIVE_INFINITY };
    restartWindows.push(window);
    const r = await restartApiserver(dir, { readyTimeoutMs: 180_000 });
    window.to = Date.now() + RBAC_SYNC_GRACE_MS;
    phase('kube-apiserver restart: stop, then ready again', `${secs(r.stopMs)} to stop (pid ${r.oldPid}${r.killed ? ', SIGKILLed after the SIGTERM grace' : ''}), ${secs(r.readyMs)} to /readyz (pid ${r.newPid})`);
    // The watcher's node watch is live again: a mark written after the restart reaches it.
    const mark = String(Date.now());
    const node = readyNodes(store)[0];
    assert.ok(store.mutate('nodes', undefined, node, (o) => void (o.metadata.annotations = { ...(o.metadata.annotations ?? {}), 'fleet-attach.io/test-mark': mark })), `mark on ${node}`);
    await until('the watcher sees a write made after the restart', 120_000, () => w.get('nodes', undefined, node)?.metadata.annotations?.['fleet-attach.io/test-mark'] === mark);
    const attachesBefore = w.checker.operations().attaches;
    const tLead = await until('the controller leads and acts after the kube-apiserver restart', 180_000, acting, () => c.grepLogs(/leader|lease|restart/i).slice(-5).map((l) => l.line).join('\n'));
    await until('VolumeAttachments created after the restart', 120_000, () => w.checker.operations().attaches >= attachesBefore + 20, async () => `attaches ${w.checker.operations().attaches - attachesBefore}; ${await convergenceDetail()}`);
    phase('kube-apiserver restart: controller leading again', `${secs(tLead)} after /readyz; ${c.instances.length - instancesBefore} new controller instance(s) (exits by itself: ${c.unexpectedExits.length}); acting after ${secs(performance.now() - t0)} in all`);
    assert.deepEqual(w.checker.violations(), []);
  }));

  it('converges once churn stops: every desired volume attached and reported, zero violations, no 403', { timeout: 600_000 }, step('final convergence', async () => {
    const w = watcher!;
    const c = ctl!;
    const t0 = performance.now();
    const left = await churn!.stop(60_000);
    assert.equal(left, 0, `churn follow-ups (claim deletions, re-creations) not done within 60 s: ${churn!.waiting().join(', ')}`);
    phase('churn', JSON.stringify(churn!.stats()));
    w.checker.faultsStopped();
    await until('convergence after the faults', CONVERGENCE_BOUND_MS + 30_000, converged, convergenceDetail, 1000);
    const conv = w.checker.convergence();
    phase('kube-apiserver restart: final convergence (churn stopped)', `${secs(performance.now() - t0)} (${secs(Date.now() - (restartWindows[0]?.from ?? Date.now()))} from the restart's start); ${conv.attached}/${conv.desired} pairs, ${conv.strayAttachments} stray attachments`);

    // The watcher followed the API all along: a fresh list now shows exactly what it holds.
    const fresh = await createRemoteStore({ kubeconfig: { path: cluster!.adminKubeconfig }, resources: WATCHED.map((resource) => ({ resource })), syncTimeoutMs: 60_000 });
    try {
      for (const resource of WATCHED) {
        assert.deepEqual(diffVersions(versions(w, resource), versions(fresh, resource)), [], `the watcher's ${resource} differ from a fresh list`);
      }
    } finally {
      await fresh.close({ flushMs: 0 });
    }
    // Every pod's volume, checked from the API objects themselves: VolumeAttachment attached
    // and the volume in its node's volumesAttached.
    const pods = unattachedPods(w);
    phase('pod volumes checked from the API objects', `${pods.checked} attached and reported; ${pods.bad.length} not; ${pods.unresolvable.length} claims that do not resolve ${JSON.stringify(pods.unresolvable.slice(0, 5))}`);
    assert.deepEqual(pods.bad.slice(0, 10), [], `${pods.bad.length} pod volumes not attached and reported`);
    assert.equal(pods.checked, w.checker.convergence().desired, 'pod volumes checked = desired pairs of the checker');

    const violations = w.checker.violations();
    assert.deepEqual(violations.map((v) => `${v.kind} ${v.volume} ${v.nodes.join(',')}: ${v.detail}`), [], 'invariant violations over the whole run');

    // 403s: every refusal in the controller's log must be of a permission the ServiceAccount has
    // (SubjectAccessReview now; else deploy/rbac.yaml lacks it) and fall while kube-apiserver was
    // restarting; the 403 counts of its metrics must have grown only then too.
    await c.scrapeNow();
    const inRestart = (at: number) => restartWindows.some((x) => at >= x.from && at <= x.to);
    const refusals = c.grepLogs(/forbidden/i).map((l) => parseRefusal(l.n, l.line)).filter((r): r is Refusal => r !== undefined);
    const kinds = new Map(refusals.map((r) => [`${r.verb} ${r.resource}.${r.group} -n ${r.namespace ?? ''}`, r]));
    const gaps = [...kinds].filter(([, r]) => !granted(cluster!.adminKubeconfig, r)).map(([k, r]) => `${k}: ${r.line}`);
    const unexplained = refusals.filter((r) => !inRestart(r.at)).map((r) => `#${r.n} at ${new Date(r.at).toISOString()}: ${r.line}`);
    const metricOutside = c.forbiddenSeen.filter((f) => !inRestart(f.at));
    phase('controller API answers', `${c.answers('200') + c.answers('201')} 2xx, 403: ${c.answers('403')} (metrics), 401: ${c.answers('401')}; refusals in the log: ${refusals.length} (${[...kinds.keys()].join('; ') || 'none'}), all granted by RBAC: ${gaps.length === 0}, all while kube-apiserver restarted: ${unexplained.length === 0}; instances ${c.instances.length}, exits by themselves ${c.unexpectedExits.length}`);
    assert.deepEqual(gaps, [], 'the controller was refused a permission deploy/rbac.yaml does not grant');
    assert.deepEqual(unexplained.slice(0, 5), [], '403 answers to the controller outside the kube-apiserver restart');
    assert.deepEqual(metricOutside, [], '403 answers in the controller\'s metrics outside the kube-apiserver restart');
    assert.equal(c.answers('401'), 0, '401 answers to the controller');
    // Fleet writes that failed for good (retries exhausted while kube-apiserver was down) are
    // the fleet's, not the controller's: reported, not asserted.
    phase('fleet', JSON.stringify({ ...fleetStore!.stats(), actors: actors!.stats() }));
    phase('watcher', JSON.stringify({ feed: w.feed.counters, reflectors: w.stats() }));
  }));
});

function isReady(node: KubeObject | undefined): boolean {
  const conds = ((node?.status as { conditions?: Array<{ type?: string; status?: string }> } | undefined)?.conditions) ?? [];
  return conds.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** VolumeAttachment names of `pod`'s volumes on `node`. */
function vaNamesOf(store: RemoteStore, pod: KubeObject, node: string): string[] {
  const out: string[] = [];
  for (const claim of podClaimNames(pod)) {
    const pv = pvcVolumeName(store.get('persistentvolumeclaims', pod.metadata.namespace, claim));
    const src = pv ? pvCsiSource(store.get('persistentvolumes', undefined, pv)!) : undefined;
    if (src) out.push(volumeAttachmentName(src.handle, src.driver, node));
  }
  return out;
}

/**
 * Live fleet pods whose volume is not attached (VolumeAttachment status.attached) and listed in
 * the node's volumesAttached (`bad`), among those whose claim resolves as the controller's rule
 * requires (PVC Bound to a PV whose claimRef has the PVC's uid); the others (`unresolvable`, with
 * why) are no volume the controller may attach.
 */
function unattachedPods(store: WatchedObjects): { bad: string[]; unresolvable: string[]; checked: number } {
  const out = { bad: [] as string[], unresolvable: [] as string[], checked: 0 };
  for (const pod of store.list('pods', FLEET_NAMESPACE)) {
    if (pod.metadata.deletionTimestamp) continue;
    const node = (pod.spec as { nodeName?: string }).nodeName ?? '';
    const listed = new Set((((store.get('nodes', undefined, node)?.status as { volumesAttached?: Array<{ name: string }> } | undefined)?.volumesAttached) ?? []).map((v) => v.name));
    for (const claim of podClaimNames(pod)) {
      const pvc = store.get('persistentvolumeclaims', pod.metadata.namespace, claim);
      const pvName = pvcVolumeName(pvc);
      const pv = pvName ? store.get('persistentvolumes', undefined, pvName) : undefined;
      const src = pv ? pvCsiSource(pv) : undefined;
      const refUid = (pv?.spec as { claimRef?: { uid?: string } } | undefined)?.claimRef?.uid;
      const why = !pvc ? 'no PVC' : (pvc.status as { phase?: string } | undefined)?.phase !== 'Bound' ? `PVC ${claim} not Bound` : !pv ? `PV ${pvName} absent` : !src ? 'not a CSI PV' : refUid !== pvc.metadata.uid ? `PV ${pvName} claimRef.uid ${refUid} is not PVC ${claim}'s uid ${pvc.metadata.uid}` : undefined;
      if (why || !src) {
        out.unresolvable.push(`${pod.metadata.name}: ${why}`);
        continue;
      }
      out.checked++;
      const va = store.get('volumeattachments', undefined, volumeAttachmentName(src.handle, src.driver, node));
      const attached = (va?.status as { attached?: boolean } | undefined)?.attached === true && !va?.metadata.deletionTimestamp;
      const reported = listed.has(uniqueVolumeName(src.driver, src.handle));
      if (!attached || !reported) out.bad.push(`${pod.metadata.name} on ${node}: ${!va ? 'no VolumeAttachment' : !attached ? 'not attached' : 'not in volumesAttached'}`);
    }
  }
  return out;
}

/** VolumeAttachments no live pod on their node wants (name, PV, node, state). */
function strayAttachments(store: WatchedObjects): string[] {
  const claimOfPv = new Map<string, string>();
  for (const pv of store.list('persistentvolumes')) {
    const ref = (pv.spec as { claimRef?: { namespace?: string; name?: string } } | undefined)?.claimRef;
    if (ref) claimOfPv.set(pv.metadata.name, `${ref.namespace}/${ref.name}`);
  }
  const wanted = new Set<string>();
  for (const pod of store.list('pods')) {
    if (pod.metadata.deletionTimestamp) continue;
    const node = (pod.spec as { nodeName?: string }).nodeName ?? '';
    for (const claim of podClaimNames(pod)) wanted.add(`${node}|${pod.metadata.namespace}/${claim}`);
  }
  const out: string[] = [];
  for (const va of store.list('volumeattachments')) {
    const spec = vaSpec(va);
    const claim = spec?.pvName ? claimOfPv.get(spec.pvName) : undefined;
    if (spec && claim && wanted.has(`${spec.nodeName}|${claim}`)) continue;
    out.push(`${va.metadata.name} pv=${spec?.pvName} node=${spec?.nodeName} claim=${claim ?? 'none'} attached=${String((va.status as { attached?: boolean } | undefined)?.attached)} deleting=${va.metadata.deletionTimestamp !== undefined}`);
  }
  return out;
}
