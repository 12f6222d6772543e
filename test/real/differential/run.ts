/**
 * One run of one scenario with one controller: a fresh control plane (etcd + kube-apiserver),
 * the driver's watches from the start, the scenario's set-up, the controller, the scenario's
 * steps, a quiet period, the record; then everything is stopped and the directory removed
 * (kept with FA_DIFF_KEEP=1, or named in the error when the run fails).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { down, up, type RealCluster } from '../real-cluster.js';
import { startController, type ControllerKind, type RunningController } from './controllers.js';
import { Driver, type ScenarioRecord } from './driver.js';
import { kubeFromKubeconfig, type Kube } from './kube.js';
import type { Scenario } from './scenarios.js';

export interface RunResult {
  kind: ControllerKind;
  record: ScenarioRecord;
  /** Wall time of the run, start-up of the control plane included (reported, never asserted). */
  ms: number;
}

/** A control plane in a fresh directory (`up` itself starts again on new ports when one was taken). */
async function upFresh(prefix: string): Promise<{ dir: string; cluster: RealCluster }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  try {
    return { dir, cluster: await up({ dir, readyTimeoutMs: 90_000 }) };
  } catch (err) {
    await down(dir);
    (err as Error).message += `\n(run directory kept: ${dir})`;
    throw err;
  }
}

export async function runScenario(s: Scenario, kind: ControllerKind): Promise<RunResult> {
  const t0 = Date.now();
  let dir = '';
  let cluster: RealCluster | undefined;
  let kube: Kube | undefined;
  let driver: Driver | undefined;
  let ctl: RunningController | undefined;
  let failed = false;
  try {
    ({ dir, cluster } = await upFresh(`fa-diff-${s.name}-${kind}-`));
    kube = kubeFromKubeconfig(cluster.adminKubeconfig);
    driver = new Driver(kube, `${s.name}/${kind}`);
    await driver.start();
    await driver.csiDriver(s.attachRequired ?? true);
    await s.setup?.(driver);
    // The attacher finishes with what the set-up created before the controller looks.
    await driver.settle(500, 20_000);
    ctl = startController(kind, cluster, dir, s.args);
    await ctl.waitReady();
    // Its first reconcile pass and populator tick (C10's first full pod list) have run.
    await driver.pause(500);
    await s.run(driver);
    await driver.settle(2000, 30_000);
    const record = await driver.record();
    return { kind, record, ms: Date.now() - t0 };
  } catch (err) {
    failed = true;
    const e = err as Error;
    e.message += `\n--- ${kind} log (${ctl?.logFile ?? 'not started'}), last lines ---\n${ctl?.tail(60) ?? ''}\n(run directory kept: ${dir})`;
    throw e;
  } finally {
    driver?.stop();
    await ctl?.stop();
    kube?.close();
    if (dir) await down(dir);
    if (dir && !failed && process.env.FA_DIFF_KEEP !== '1') await rm(dir, { recursive: true, force: true });
  }
}
