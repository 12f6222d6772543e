/**
 * Telling an RBAC gap from a restarting API server. A 403 answer to the controller means one of
 * two things: deploy/rbac.yaml lacks a permission the code uses (the test must fail), or
 * kube-apiserver answered before its RBAC authorizer had synced its caches (it serves requests
 * before /readyz is ok, and a restart briefly denies what is granted). So each refusal found in
 * the controller's log is checked twice: with a SubjectAccessReview (`kubectl auth can-i --as`
 * the ServiceAccount, under the admin kubeconfig), which must say the permission is granted, and
 * against the windows in which kube-apiserver was restarting, in which it must fall.
 */
import { spawnSync } from 'node:child_process';

export interface Refusal {
  /** Controller instance. */
  n: number;
  /** Epoch ms (the log line's time). */
  at: number;
  verb: string;
  resource: string;
  group: string;
  namespace: string | undefined;
  line: string;
}

export const SERVICE_ACCOUNT = 'system:serviceaccount:kube-system:fleet-attach';

const REFUSED = /cannot (\w+) resource \\*"([^"\\]+)\\*"(?: in API group \\*"([^"\\]*)\\*")?(?: in the namespace \\*"([^"\\]+)\\*")?/;

/** The refusal a log line reports (kube-apiserver's Forbidden message), if any. */
export function parseRefusal(n: number, line: string): Refusal | undefined {
  if (!/forbidden/i.test(line)) return undefined;
  const m = REFUSED.exec(line);
  const at = Number(/"time":(\d+)/.exec(line)?.[1] ?? NaN);
  return { n, at, verb: m?.[1] ?? '?', resource: m?.[2] ?? '?', group: m?.[3] ?? '', namespace: m?.[4], line: line.slice(0, 600) };
}

/** Whether the ServiceAccount may do it, as the API server's authorizer says now. */
export function granted(adminKubeconfig: string, r: Pick<Refusal, 'verb' | 'resource' | 'group' | 'namespace'>): boolean {
  const [plural, sub] = r.resource.split('/');
  const target = r.group ? `${plural}.${r.group}` : plural;
  const args = ['--kubeconfig', adminKubeconfig, 'auth', 'can-i', r.verb, target, '--as', SERVICE_ACCOUNT];
  if (sub) args.push('--subresource', sub);
  if (r.namespace) args.push('-n', r.namespace);
  const out = spawnSync('kubectl', args, { encoding: 'utf8', timeout: 30_000 });
  return out.stdout.trim() === 'yes';
}
