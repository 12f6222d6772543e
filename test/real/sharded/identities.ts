/**
 * One identity per replica on the real cluster: a ServiceAccount in kube-system for each name,
 * added as a subject to every binding of deploy/rbac.yaml and deploy/rbac-sharded.yaml (so each
 * has exactly what the shipped manifests grant, no more), and a kubeconfig with a TokenRequest
 * token of its own. The kube-apiserver then tells the replicas apart: its audit log names the
 * ServiceAccount of every write.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';

const ROOT = resolve(new URL('../../..', import.meta.url).pathname);
export const IDENTITY_NAMESPACE = 'kube-system';

/** The user name kube-apiserver gives a ServiceAccount's token (and writes in its audit log). */
export const serviceAccountUser = (sa: string) => `system:serviceaccount:${IDENTITY_NAMESPACE}:${sa}`;

function kubectl(kubeconfig: string, args: readonly string[], input?: string): string {
  const r = spawnSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', input });
  if (r.error) throw new Error(`kubectl: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  subjects?: Array<{ kind: string; name: string; namespace?: string }>;
}

/**
 * Creates the ServiceAccounts `names`, binds them through the manifests' own bindings, and
 * writes DIR/<name>.kubeconfig for each (the CA and server of `templateKubeconfig`, the
 * account's token). Returns name → kubeconfig path.
 */
export function createIdentities(o: { dir: string; adminKubeconfig: string; templateKubeconfig: string; names: readonly string[] }): Map<string, string> {
  const docs: Manifest[] = [];
  for (const file of ['rbac.yaml', 'rbac-sharded.yaml']) {
    for (const d of parseAllDocuments(readFileSync(join(ROOT, 'deploy', file), 'utf8'))) {
      const m = d.toJS() as Manifest | null;
      if (m) docs.push(m);
    }
  }
  const out: Manifest[] = [];
  for (const name of o.names) out.push({ kind: 'ServiceAccount', metadata: { name, namespace: IDENTITY_NAMESPACE }, apiVersion: 'v1' } as Manifest);
  for (const m of docs) {
    if (m.kind === 'ServiceAccount') continue;
    if (m.kind === 'RoleBinding' || m.kind === 'ClusterRoleBinding') {
      m.subjects = [...(m.subjects ?? []), ...o.names.map((name) => ({ kind: 'ServiceAccount', name, namespace: IDENTITY_NAMESPACE }))];
    }
    out.push(m);
  }
  kubectl(o.adminKubeconfig, ['apply', '-f', '-'], out.map((m) => stringify(m)).join('---\n'));

  const template = parse(readFileSync(o.templateKubeconfig, 'utf8')) as { users: Array<{ user: { token?: string } }> };
  const paths = new Map<string, string>();
  for (const name of o.names) {
    const token = kubectl(o.adminKubeconfig, ['-n', IDENTITY_NAMESPACE, 'create', 'token', name, '--duration=48h']).trim();
    const kc = structuredClone(template);
    for (const u of kc.users) u.user.token = token;
    const path = join(o.dir, `${name}.kubeconfig`);
    writeFileSync(path, stringify(kc), { mode: 0o600 });
    paths.set(name, path);
  }
  return paths;
}
