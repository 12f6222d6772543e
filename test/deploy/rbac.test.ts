/**
 * deploy/: the manifests parse and fit together (Deployment → ServiceAccount → bindings →
 * roles; flags the `run` command accepts; probes and metrics on the port it listens on), and
 * the RBAC rules grant exactly the (API group, resource, verb) triples the controller uses.
 *
 * "Uses" is measured, not listed: a controller with leader election runs a scenario that
 * takes every request path (lease create and renew; list and watch of every informer; a
 * VolumeAttachment create that races an existing one and reads it back; a failing attach whose
 * repeated event is patched; node status; the live Node read before a safe detach; the VA
 * delete), and the simulator records every request as the API server's authorizer would see
 * it (group from the path, subresource included). The client's own request hook must report
 * the same set, so neither side can miss a call the other sees.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { parseFlags } from '../../src/cli/flags.js';
import { CONTROLLER_FLAGS } from '../../src/cli/controller-flags.js';
import type { RequestFacts } from '../../src/sim/server/index.js';
import type { RequestReport } from '../../src/kube/request-hook.js';
import {
  DRIVER, attachVa, createVolumeAndPod, failVa, node, setVolumesInUse, startHarness, uniqueName, vaExists, vaName, volumesAttached, waitFor,
} from '../controller/harness.js';

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string> } } & Record<string, unknown>;
interface Rule { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }

function load(file: string): Manifest[] {
  const docs = parseAllDocuments(readFileSync(new URL(`../../deploy/${file}`, import.meta.url), 'utf8'));
  for (const d of docs) assert.deepEqual(d.errors, [], `${file} parses`);
  return docs.map((d) => d.toJS() as Manifest).filter((m) => m !== null);
}

function one(ms: Manifest[], kind: string): Manifest {
  const found = ms.filter((m) => m.kind === kind);
  assert.equal(found.length, 1, `exactly one ${kind}`);
  return found[0];
}

/** `group|resource|verb` for every triple a set of rules grants. */
function grants(rules: Rule[]): Set<string> {
  const out = new Set<string>();
  for (const r of rules) {
    assert.equal(r.resourceNames, undefined, 'no resourceNames restrictions to model');
    for (const g of r.apiGroups) for (const res of r.resources) for (const v of r.verbs) out.add(`${g}|${res}|${v}`);
  }
  return out;
}

const rbac = load('rbac.yaml');
const deployment = load('deployment.yaml');

test('deploy manifests: two replicas with leader election, probes on /healthz and /readyz, metrics on the listen port, wired to the RBAC', () => {
  const d = one(deployment, 'Deployment') as Manifest & { spec: { replicas: number; template: { metadata: { annotations?: Record<string, string> }; spec: { serviceAccountName: string; containers: Array<Record<string, unknown>> } } } };
  assert.equal(d.spec.replicas, 2);
  const pod = d.spec.template.spec;
  assert.equal(pod.containers.length, 1);
  const c = pod.containers[0] as { args: string[]; ports: Array<{ name: string; containerPort: number }>; livenessProbe: { httpGet: { path: string; port: string | number } }; readinessProbe: { httpGet: { path: string; port: string | number } } };
  assert.equal(c.args[0], 'run');
  // The flags parse as `fleet-attach run` parses them (an unknown or malformed one throws).
  const { flags } = parseFlags(CONTROLLER_FLAGS, c.args.slice(1));
  assert.equal(flags['leader-elect'], true);
  const listenPort = Number(/:(\d+)$/.exec(flags.listen)?.[1]);
  assert.ok(!flags.listen.startsWith('127.') && !flags.listen.startsWith('localhost'), 'listens beyond loopback, for the kubelet probes');
  assert.ok(flags['http-token'] || flags['http-token-file'], 'a bearer token, required off loopback');
  const portOf = (p: string | number) => (typeof p === 'number' ? p : c.ports.find((x) => x.name === p)?.containerPort);
  assert.equal(c.livenessProbe.httpGet.path, '/healthz');
  assert.equal(c.readinessProbe.httpGet.path, '/readyz');
  assert.equal(portOf(c.livenessProbe.httpGet.port), listenPort);
  assert.equal(portOf(c.readinessProbe.httpGet.port), listenPort);
  // The token file comes from a mounted Secret volume (the pod cannot start without one).
  const mounts = (c as unknown as { volumeMounts?: Array<{ name: string; mountPath: string }> }).volumeMounts ?? [];
  const volumes = (pod as unknown as { volumes?: Array<{ name: string; secret?: { secretName: string } }> }).volumes ?? [];
  const mount = mounts.find((m) => flags['http-token-file'].startsWith(`${m.mountPath}/`));
  assert.ok(mount, 'the token file lies in a mounted volume');
  assert.ok(volumes.find((v) => v.name === mount.name)?.secret?.secretName, 'that volume is a Secret');

  const sa = one(rbac, 'ServiceAccount');
  assert.equal(pod.serviceAccountName, sa.metadata.name);
  assert.equal(d.metadata.namespace, sa.metadata.namespace);
  const subjectOk = (b: Manifest) => (b.subjects as Array<{ kind: string; name: string; namespace: string }>).some((s) => s.kind === 'ServiceAccount' && s.name === sa.metadata.name && s.namespace === sa.metadata.namespace);
  const crb = one(rbac, 'ClusterRoleBinding');
  assert.deepEqual(crb.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: one(rbac, 'ClusterRole').metadata.name });
  assert.ok(subjectOk(crb));
  const rb = one(rbac, 'RoleBinding');
  const role = one(rbac, 'Role');
  assert.deepEqual(rb.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.metadata.name });
  assert.equal(rb.metadata.namespace, role.metadata.namespace);
  assert.ok(subjectOk(rb));
  assert.equal(role.metadata.namespace, flags['leader-elect-resource-namespace'], 'the Role covers the Lease namespace');

  // runAsNonRoot needs a user the kubelet can check: a numeric USER in the image, or runAsUser.
  const sc = (c as unknown as { securityContext?: { runAsNonRoot?: boolean; runAsUser?: number } }).securityContext ?? {};
  if (sc.runAsNonRoot) {
    const user = [...readFileSync(new URL('../../deploy/Dockerfile', import.meta.url), 'utf8').matchAll(/^USER\s+(\S+)/gm)].at(-1)?.[1] ?? '';
    assert.ok(sc.runAsUser !== undefined || /^[1-9]\d*(:\d+)?$/.test(user), `runAsNonRoot with the image's USER ${user || '(root)'}: the kubelet cannot verify it`);
  }
});

test('the ClusterRole and the Role grant exactly the (group, resource, verb) triples the controller uses, measured', { timeout: 60_000 }, async () => {
  const server = new Map<string, Set<string>>(); // group|resource|verb → namespaces
  const client = new Set<string>(); // verb|resource
  let raced = false;
  const va = vaName('r1', 'node-a');
  const h = await startHarness(
    {
      leaderElect: true, leaderElectLeaseDurationMs: 1500, leaderElectRenewDeadlineMs: 1000, leaderElectRetryPeriodMs: 200,
      identity: 'rbac-test', onRequest: (r: RequestReport) => client.add(`${r.verb}|${r.resource}`),
    },
    {
      faults: {
        beforeRequest(f: RequestFacts) {
          const group = /^\/apis\/([^/]+)\//.exec(f.path)?.[1] ?? '';
          const key = `${group}|${f.resource}${f.subresource ? `/${f.subresource}` : ''}|${f.verb}`;
          server.set(key, (server.get(key) ?? new Set()).add(f.namespace ?? ''));
          // Another writer creates the same VolumeAttachment first: the create meets 409 and reads it back.
          if (f.verb === 'create' && f.resource === 'volumeattachments' && f.name === undefined && !raced) {
            raced = true;
            h.sim.store.create('volumeattachments', {
              apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: va },
              spec: { attacher: DRIVER, nodeName: 'node-a', source: { persistentVolumeName: 'pv-r1' } },
            });
          }
          return undefined;
        },
      },
    },
  );
  const seen = (key: string) => server.has(key);
  try {
    await h.ctl.acting();
    await waitFor('lease renewed', () => seen('coordination.k8s.io|leases|update'));
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    createVolumeAndPod(store, 'default', 'r1');
    await waitFor('the raced create read back', () => seen('storage.k8s.io|volumeattachments|get'));
    failVa(h.sim, va, 'injected attach failure');
    await waitFor('the repeated FailedAttachVolume event patched', () => seen('|events|patch'), 20_000);
    attachVa(h.sim, va);
    await waitFor('volume in node status', () => volumesAttached(h.sim, 'node-a').includes(uniqueName('r1')), 20_000);
    setVolumesInUse(h.sim, 'node-a', [uniqueName('r1')]);
    store.delete('pods', 'default', 'pod-r1', { gracePeriodSeconds: 0 });
    setVolumesInUse(h.sim, 'node-a', []);
    await waitFor('VolumeAttachment deleted', () => !vaExists(h.sim, va), 20_000);
  } finally {
    await h.stop();
  }

  const cluster = grants(one(rbac, 'ClusterRole').rules as Rule[]);
  const role = one(rbac, 'Role');
  const namespaced = grants(role.rules as Rule[]);
  const used = new Set(server.keys());
  for (const key of used) {
    const namespaces = [...server.get(key)!];
    const allowed = cluster.has(key) || (namespaced.has(key) && namespaces.every((ns) => ns === role.metadata.namespace));
    assert.ok(allowed, `used but not granted: ${key} (namespaces ${namespaces.join(',') || '-'})`);
  }
  for (const key of [...cluster, ...namespaced]) assert.ok(used.has(key), `granted but never used: ${key}`);
  // The client's hook (metrics, this test) sees every request the server saw, and nothing else.
  assert.deepEqual([...client].sort(), [...new Set([...used].map((k) => { const [, res, verb] = k.split('|'); return `${verb}|${res}`; }))].sort());
});
