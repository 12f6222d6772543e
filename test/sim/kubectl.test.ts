/**
 * A real kubectl against `fleet-attach sim` started through the package's bin entry (which
 * runs dist/, built here by scripts/ensure-build.js). Skipped, visibly, only when no kubectl
 * is on PATH (CI installs Debian's kubernetes-client).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { until } from './sim-helpers.js';

const root = new URL('../..', import.meta.url).pathname;

function findKubectl(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const p = join(dir, 'kubectl');
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

const kubectlPath = findKubectl();
const dir = mkdtempSync(join(tmpdir(), 'fa-kubectl-'));
const kc = join(dir, 'kubeconfig');
let sim: ChildProcess | undefined;
let simLog = '';

function kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(kubectlPath as string, ['--kubeconfig', kc, '--cache-dir', join(dir, 'cache'), ...args], { env: { ...process.env, HOME: dir }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

async function ok(args: string[], input?: string): Promise<string> {
  const r = await kubectl(args, input);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed: ${r.stderr}\nsim log:\n${simLog}`);
  return r.stdout;
}

const MANIFESTS = `
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {zone: z1}}
---
apiVersion: v1
kind: Pod
metadata: {name: pod-a, namespace: default, labels: {app: web}}
spec: {nodeName: node-a, containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-a}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], csi: {driver: drv.example.com, volumeHandle: h-a}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: pvc-a, namespace: default}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, volumeName: pv-a}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va-a}
spec: {attacher: drv.example.com, nodeName: node-a, source: {persistentVolumeName: pv-a}}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: drv.example.com}
spec: {attachRequired: true}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-a}
spec: {drivers: [{name: drv.example.com, nodeID: node-a}]}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: lease-a, namespace: default}
spec: {holderIdentity: node-a}
---
apiVersion: v1
kind: Event
metadata: {name: ev-a, namespace: default}
involvedObject: {kind: Pod, name: pod-a, namespace: default}
reason: Tested
message: hello
type: Normal
`;

before(async () => {
  if (!kubectlPath) return;
  execFileSync(process.execPath, [join(root, 'scripts/ensure-build.js')], { cwd: root, stdio: 'inherit' });
  // --attacher off: the test VolumeAttachment must not get the simulated attacher's finalizer.
  sim = spawn(process.execPath, [join(root, 'bin/fleet-attach.js'), 'sim', '--nodes', '0', '--attacher', 'off', '--listen', '127.0.0.1:0', '--kubeconfig-out', kc], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  sim.stdout?.on('data', (d: Buffer) => (simLog += d.toString()));
  sim.stderr?.on('data', (d: Buffer) => (simLog += d.toString()));
  // The kubeconfig is written before the log line that names the address reaches the pipe: wait for both.
  const listening = /listening on https:\/\/127\.0\.0\.1:\d+/;
  await until('the kubeconfig file and the listening line', () => (existsSync(kc) && listening.test(simLog)) || sim?.exitCode !== null, 60_000);
  assert.ok(existsSync(kc), `sim exited early:\n${simLog}`);
  assert.match(simLog, listening);
});

after(async () => {
  if (sim && sim.exitCode === null) {
    const exited = new Promise((r) => sim?.once('exit', r));
    sim.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

test('kubectl creates, lists and deletes every resource kind', async (t) => {
  if (!kubectlPath) return t.skip('kubectl not found');
  writeFileSync(join(dir, 'all.yaml'), MANIFESTS);
  const created = await ok(['create', '-f', join(dir, 'all.yaml'), '--validate=false']);
  assert.equal(created.trim().split('\n').filter((l) => l.endsWith(' created')).length, 10, created);
  const list = JSON.parse(await ok(['get', 'nodes,pods,pv,pvc,volumeattachments,events', '-A', '-o', 'json'])) as { kind: string; items: Array<{ kind: string; metadata: { name: string } }> };
  assert.equal(list.kind, 'List');
  assert.deepEqual(list.items.map((i) => `${i.kind}/${i.metadata.name}`).sort(), ['Event/ev-a', 'Node/node-a', 'PersistentVolume/pv-a', 'PersistentVolumeClaim/pvc-a', 'Pod/pod-a', 'VolumeAttachment/va-a']);
  assert.match(await ok(['get', 'leases,csidrivers,csinodes', '-A', '-o', 'name']), /lease.coordination.k8s.io\/lease-a[\s\S]*csidriver.storage.k8s.io\/drv.example.com[\s\S]*csinode.storage.k8s.io\/node-a/);
  assert.match(await ok(['get', 'po', '-l', 'app=web', '-o', 'name']), /^pod\/pod-a$/m);
  assert.equal((await ok(['get', 'po', '-l', 'app=other', '-o', 'name'])).trim(), '');
  assert.match(await ok(['get', 'no', 'node-a']), /NAME\s+STATUS\s+ROLES\s+AGE[\s\S]*node-a\s+Unknown/);
  assert.match(await ok(['get', 'po', 'pod-a', '-o', 'wide']), /READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE[\s\S]*pod-a\s+0\/1\s+Pending[\s\S]*node-a/);
  const deleted = await ok(['delete', '-f', join(dir, 'all.yaml'), '--grace-period=0', '--force']);
  assert.equal(deleted.trim().split('\n').filter((l) => l.includes(' deleted')).length, 10, deleted);
  const after = JSON.parse(await ok(['get', 'nodes,pods,pv,pvc,volumeattachments,events', '-A', '-o', 'json'])) as { items: unknown[] };
  assert.equal(after.items.length, 0);
  const missing = await kubectl(['get', 'pod', 'pod-a']);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /NotFound|not found/);
});

test('kubectl patch: merge, json and the default strategic merge', async (t) => {
  if (!kubectlPath) return t.skip('kubectl not found');
  await ok(['create', '-f', '-', '--validate=false'], 'apiVersion: v1\nkind: Node\nmetadata: {name: node-p, labels: {a: "1"}}\nspec: {taints: [{key: k1, effect: NoSchedule}]}\n');
  await ok(['patch', 'node', 'node-p', '--type', 'merge', '-p', '{"metadata":{"labels":{"a":null,"b":"2"}}}']);
  await ok(['patch', 'node', 'node-p', '--type', 'json', '-p', '[{"op":"test","path":"/metadata/labels/b","value":"2"},{"op":"add","path":"/metadata/labels/c","value":"3"}]']);
  await ok(['patch', 'node', 'node-p', '-p', '{"metadata":{"finalizers":["x/y"]},"spec":{"taints":[{"key":"k2","effect":"NoExecute"}]}}']);
  const n = JSON.parse(await ok(['get', 'node', 'node-p', '-o', 'json'])) as { metadata: { labels: object; finalizers: string[] }; spec: { taints: unknown[] } };
  assert.deepEqual(n.metadata.labels, { b: '2', c: '3' });
  assert.deepEqual(n.metadata.finalizers, ['x/y']);
  assert.deepEqual(n.spec.taints, [{ key: 'k2', effect: 'NoExecute' }]);
  const failed = await kubectl(['patch', 'node', 'node-p', '--type', 'json', '-p', '[{"op":"test","path":"/metadata/labels/b","value":"nope"}]']);
  assert.notEqual(failed.code, 0);
  // A finalizer holds the deletion until a patch removes it.
  await ok(['delete', 'node', 'node-p', '--wait=false']);
  assert.match(await ok(['get', 'node', 'node-p', '-o', 'jsonpath={.metadata.deletionTimestamp}']), /\d{4}-/);
  await ok(['patch', 'node', 'node-p', '--type', 'merge', '-p', '{"metadata":{"finalizers":null}}']);
  assert.notEqual((await kubectl(['get', 'node', 'node-p'])).code, 0);
});

test('kubectl get pods -w shows changes as they happen', async (t) => {
  if (!kubectlPath) return t.skip('kubectl not found');
  await ok(['create', '-f', '-', '--validate=false'], 'apiVersion: v1\nkind: Pod\nmetadata: {name: watched-1}\nspec: {containers: [{name: c, image: i}]}\n');
  const w = spawn(kubectlPath, ['--kubeconfig', kc, '--cache-dir', join(dir, 'cache'), 'get', 'pods', '-w'], { env: { ...process.env, HOME: dir } });
  let out = '';
  w.stdout.on('data', (d: Buffer) => (out += d.toString()));
  w.stderr.on('data', (d: Buffer) => (out += d.toString()));
  try {
    await until('the initial list', () => out.includes('watched-1'), 30_000);
    await ok(['create', '-f', '-', '--validate=false'], 'apiVersion: v1\nkind: Pod\nmetadata: {name: watched-2}\nspec: {containers: [{name: c, image: i}]}\n');
    await until('the created pod', () => out.includes('watched-2'), 30_000);
    const lines = () => out.split('\n').filter((l) => l.startsWith('watched-1')).length;
    const before = lines();
    await ok(['label', 'pod', 'watched-1', 'x=1']);
    await until('the label change', () => lines() > before, 30_000);
    await ok(['delete', 'pod', 'watched-1', 'watched-2']);
    await until('the deletions', () => lines() > before + 1, 30_000);
  } finally {
    const exited = new Promise((r) => w.once('exit', r));
    w.kill('SIGTERM');
    await exited;
  }
});
