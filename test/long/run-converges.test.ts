/**
 * `fleet-attach run --kubeconfig FILE` against
 * `fleet-attach sim --nodes 2000 --pods-per-node 10` (attacher and kubelet on) converges: every
 * desired pair has an attached VolumeAttachment and is listed in its node's volumesAttached.
 * Both run as separate processes through the package bin; the check reads the cluster through
 * client-node, not the controller's own view.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { CoreV1Api, KubeConfig, StorageV1Api } from '@kubernetes/client-node';
import { ensureBuilt, spawnBin, waitForFile } from '../e2e/spawn.js';

before(() => ensureBuilt());

async function waitForUrl(p: ReturnType<typeof spawnBin>, timeoutMs: number): Promise<string> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(p.output());
    if (m) return m[1];
    if (Date.now() > end) throw new Error(`no listening line: ${p.output().slice(-1000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const NODES = 2000;
const PODS_PER_NODE = 10;

test('run converges a 2000-node × 10-pod simulated fleet', { timeout: 400_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fa-e2e-'));
  const kcPath = join(dir, 'kubeconfig');
  const sim = spawnBin(['sim', '--nodes', String(NODES), '--pods-per-node', String(PODS_PER_NODE), '--listen', '127.0.0.1:0', '--kubeconfig-out', kcPath]);
  let run: ReturnType<typeof spawnBin> | undefined;
  try {
    await waitForFile(kcPath, 180_000);
    run = spawnBin(['run', '--kubeconfig', kcPath, '--listen', '127.0.0.1:0', '--dsw-list-pods-period', '30s', '--leader-elect=false', '--kube-api-qps', '20000', '--kube-api-burst', '20000', '--kube-api-max-in-flight', '48', '--list-page-size', '2000', '--workers', '1']);
    const kc = new KubeConfig();
    kc.loadFromFile(kcPath);
    const core = kc.makeApiClient(CoreV1Api);
    const storage = kc.makeApiClient(StorageV1Api);
    const deadline = Date.now() + 300_000;
    // Cheap wait on the controller's own summary first; the cluster-side check below decides.
    const url = await waitForUrl(run, 60_000);
    for (;;) {
      const s = (await (await fetch(`${url}/api/v1/summary`)).json()) as {
        pairs: { desired: number; attached: number; reportedAsAttached: number };
        apiClient: { inFlight: number; waiting: number; maxInFlight: number; admissionBound: number };
      };
      // The API client's load is the live one, against the bounds the flags set.
      assert.equal(s.apiClient.maxInFlight, 48);
      assert.equal(s.apiClient.admissionBound, 500);
      assert.ok(s.apiClient.inFlight <= s.apiClient.maxInFlight, JSON.stringify(s.apiClient));
      if (s.pairs.desired === NODES * PODS_PER_NODE && s.pairs.reportedAsAttached === s.pairs.desired) break;
      if (Date.now() > deadline) assert.fail(`controller did not converge: ${JSON.stringify(s.pairs)}\n${run.output().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    let last = '';
    for (;;) {
      const [pods, pvs, vas, nodes] = await Promise.all([
        core.listPodForAllNamespaces(), core.listPersistentVolume(), storage.listVolumeAttachment(), core.listNode(),
      ]);
      const handleOfPv = new Map(pvs.items.map((pv) => [pv.metadata!.name!, pv.spec!.csi!]));
      const pvOfClaim = new Map<string, string>();
      for (const pv of pvs.items) pvOfClaim.set(`${pv.spec!.claimRef!.namespace}/${pv.spec!.claimRef!.name}`, pv.metadata!.name!);
      const vaByName = new Map(vas.items.map((va) => [va.metadata!.name!, va]));
      const listed = new Map(nodes.items.map((n) => [n.metadata!.name!, new Set((n.status?.volumesAttached ?? []).map((v) => v.name))]));
      let desired = 0;
      let ok = 0;
      for (const pod of pods.items) {
        const nodeName = pod.spec!.nodeName!;
        for (const v of pod.spec!.volumes ?? []) {
          if (!v.persistentVolumeClaim) continue;
          desired++;
          const pvName = pvOfClaim.get(`${pod.metadata!.namespace}/${v.persistentVolumeClaim.claimName}`);
          const csi = pvName ? handleOfPv.get(pvName) : undefined;
          if (!csi) continue;
          const name = `csi-${createHash('sha256').update(csi.volumeHandle + csi.driver + nodeName).digest('hex')}`;
          const attached = vaByName.get(name)?.status?.attached === true;
          const inStatus = listed.get(nodeName)?.has(`kubernetes.io/csi/${csi.driver}^${csi.volumeHandle}`) ?? false;
          if (attached && inStatus) ok++;
        }
      }
      last = `${ok}/${desired} pairs attached and listed, ${vas.items.length} VolumeAttachments`;
      if (desired === NODES * PODS_PER_NODE && ok === desired) break;
      if (Date.now() > deadline) assert.fail(`not converged: ${last}\n${run.output().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 2000));
    }
    console.log(`converged: ${last}`);
    // Every VolumeAttachment create that was sent also reported its wait for a slot.
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const sample = (series: string) => Number(metrics.split('\n').find((l) => l.startsWith(`${series} `))?.split(' ')[1] ?? NaN);
    const creates = sample('fleet_attach_api_request_duration_seconds_count{verb="create",resource="volumeattachments"}');
    assert.ok(creates >= NODES * PODS_PER_NODE, `creates sent: ${creates}`);
    assert.equal(sample('fleet_attach_api_request_queue_seconds_count{verb="create",resource="volumeattachments"}'), creates);
    // The pods were listed 2,000 a page: 10 pages per list (the default 500 would take 40).
    const podPages = sample('fleet_attach_api_requests_total{verb="list",resource="pods",code="200"}');
    assert.ok(podPages >= 10 && podPages % 10 === 0 && podPages < 40, `pod list pages: ${podPages}`);
    assert.equal(await run.stop(), 0, 'run exits 0 on SIGTERM');
    run = undefined;
  } finally {
    await run?.stop();
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
