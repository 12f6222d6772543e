/**
 * The real control plane of the peer bench: etcd and kube-apiserver on loopback
 * (test/real/real-cluster.ts) with an audit log of the two controllers' requests only, and an
 * identity for kube-controller-manager.
 *
 * API requests by verb and resource, per controller: kube-apiserver's `apiserver_request_total`
 * has no user label, and the fleet's own actors (kubelets, attacher, churn) talk to the same
 * server, so the count comes from the audit log instead: one event per request at
 * RequestReceived (the other stages omitted), at level Metadata, for the controllers' two
 * ServiceAccounts only (`level: None` for everyone else), so the fleet's traffic costs the
 * server no audit work.
 *
 * Identities: fleet-attach runs as the ServiceAccount of deploy/rbac.yaml (controller.kubeconfig);
 * kube-controller-manager as ServiceAccount kube-system/kcm-adc bound to the bootstrap ClusterRole
 * `system:controller:attachdetach-controller`, the rights its attach/detach controller runs with
 * in a cluster (`--use-service-account-credentials`), with a TokenRequest token.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync, openSync, readSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { down, up, type RealCluster } from '../../test/real/real-cluster.js';
import { buildKubeconfig } from '../../src/sim/server/kubeconfig.js';

export const FLEET_ATTACH_USER = 'system:serviceaccount:kube-system:fleet-attach';
export const KCM_USER = 'system:serviceaccount:kube-system:kcm-adc';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["ResponseStarted", "ResponseComplete", "Panic"]
rules:
  - level: Metadata
    users: ["${FLEET_ATTACH_USER}", "${KCM_USER}"]
  - level: None
`;

export interface PeerCluster extends RealCluster {
  auditLog: string;
  kcmKubeconfig: string;
}

function kubectl(kubeconfig: string, args: readonly string[], input?: string): string {
  const r = spawnSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', input });
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.status}): ${r.stderr || r.error?.message}`);
  return r.stdout;
}

const live = new Set<string>();
let hooked = false;

/** SIGKILL of a cluster's processes, synchronously (for process 'exit'). */
function killNow(dir: string): void {
  const file = join(dir, 'cluster.json');
  if (!existsSync(file)) return;
  try {
    const { pids } = JSON.parse(readFileSync(file, 'utf8')) as { pids: { etcd: number; apiserver: number } };
    for (const pid of [pids.apiserver, pids.etcd]) {
      try {
        if (pid) process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  } catch {
    // unreadable: nothing to stop
  }
}

/** Starts the cluster in `dir` (audit on), creates kube-controller-manager's identity. */
export async function upPeerCluster(dir: string): Promise<PeerCluster> {
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const d of live) killNow(d);
    });
  }
  const policy = join(dir, 'audit-policy.yaml');
  const auditLog = join(dir, 'audit.log');
  spawnSync('mkdir', ['-p', dir]);
  writeFileSync(policy, POLICY);
  live.add(dir);
  const c = await up({
    dir,
    apiserverArgs: [
      `--audit-policy-file=${policy}`, `--audit-log-path=${auditLog}`, '--audit-log-format=json', '--audit-log-maxsize=0', '--audit-log-maxbackup=0',
    ],
  });
  kubectl(c.adminKubeconfig, ['apply', '-f', '-'], `apiVersion: v1
kind: ServiceAccount
metadata:
  name: kcm-adc
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: kcm-adc
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:controller:attachdetach-controller
subjects:
  - kind: ServiceAccount
    name: kcm-adc
    namespace: kube-system
`);
  const token = kubectl(c.adminKubeconfig, ['-n', 'kube-system', 'create', 'token', 'kcm-adc', '--duration=48h']).trim();
  const kcmKubeconfig = join(dir, 'kcm.kubeconfig');
  // The serving certificate's CA, as admin.kubeconfig carries it.
  const caPem = caFromKubeconfig(c.adminKubeconfig);
  writeFileSync(kcmKubeconfig, buildKubeconfig({ url: c.url, token, caPem, name: 'real-kcm-adc' }), { mode: 0o600 });
  return { ...c, auditLog, kcmKubeconfig };
}

function caFromKubeconfig(path: string): string | undefined {
  const m = /certificate-authority-data:\s*(\S+)/.exec(readFileSync(path, 'utf8'));
  return m ? Buffer.from(m[1]!, 'base64').toString('utf8') : undefined;
}

export async function downPeerCluster(dir: string): Promise<void> {
  await down(dir);
  live.delete(dir);
}

/** The audit log's size now: where a later count starts. */
export function auditOffset(c: PeerCluster): number {
  return existsSync(c.auditLog) ? statSync(c.auditLog).size : 0;
}

/**
 * Resource requests of `user` in the audit log from byte `from`, by `verb resource[/subresource]`
 * (as the simulator counts them); requests to non-resource paths (/healthz…) are left out.
 */
export function auditCounts(c: PeerCluster, user: string, from: number): Record<string, number> {
  const out: Record<string, number> = {};
  if (!existsSync(c.auditLog)) return out;
  const size = statSync(c.auditLog).size;
  const fd = openSync(c.auditLog, 'r');
  let pos = from;
  let rest = '';
  const buf = Buffer.alloc(8 << 20);
  try {
    while (pos < size) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, size - pos), pos);
      if (n <= 0) break;
      pos += n;
      const lines = (rest + buf.toString('utf8', 0, n)).split('\n');
      rest = lines.pop() ?? '';
      for (const l of lines) count(l);
    }
    if (rest) count(rest);
  } finally {
    closeSync(fd);
  }
  return out;

  function count(line: string): void {
    if (!line.includes(user)) return;
    const e = JSON.parse(line) as { verb: string; user?: { username?: string }; objectRef?: { resource?: string; subresource?: string } };
    if (e.user?.username !== user || !e.objectRef?.resource) return;
    const key = `${e.verb} ${e.objectRef.resource}${e.objectRef.subresource ? `/${e.objectRef.subresource}` : ''}`;
    out[key] = (out[key] ?? 0) + 1;
  }
}
