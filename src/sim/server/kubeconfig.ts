/**
 * The kubeconfig the simulator hands out: server URL, the CA to verify it with, the bearer
 * token. Written atomically (temporary file, then rename) so that a script polling for the
 * file never reads half of it. Mode 0600: it holds the token.
 */
import { rename, writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';

export interface KubeconfigParams {
  url: string;
  token: string;
  /** PEM of the CA; undefined for plain HTTP (then TLS verification is marked skipped, which client-node requires for http). */
  caPem?: string;
  name?: string;
  namespace?: string;
}

export function buildKubeconfig(p: KubeconfigParams): string {
  const name = p.name ?? 'fleet-attach-sim';
  const cluster: Record<string, unknown> = { server: p.url };
  if (p.caPem) cluster['certificate-authority-data'] = Buffer.from(p.caPem).toString('base64');
  else cluster['insecure-skip-tls-verify'] = true;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user: { token: p.token } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: p.namespace ?? 'default' } }],
    'current-context': name,
    preferences: {},
  });
}

export async function writeFileAtomic(path: string, data: string, mode = 0o600): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  await writeFile(tmp, data, { mode });
  await rename(tmp, path);
}
