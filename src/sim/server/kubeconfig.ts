/**
 * The kubeconfig the simulator hands out: server URL, the CA to verify it with, and the client
 * certificate the CA signed or, without one, the bearer token. Written atomically (temporary
 * file, then rename) so that a script polling for the file never reads half of it. Mode 0600:
 * it holds a key or the token.
 *
 * Why a certificate when there is one: a bearer token is a header value on every request, and
 * each header value not in HPACK's static table becomes a V8 external string on the
 * simulator's Node 20 HTTP/2 server, which its full collections clear one by one (the
 * simulator's pauses under churn were mostly that). A client certificate is checked once per
 * connection. Both are what kube-apiserver accepts; the controller's code path is client-node's
 * either way.
 */
import { rename, writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';

export interface KubeconfigParams {
  url: string;
  token: string;
  /** Client certificate and key (PEM) to authenticate with instead of the token. */
  client?: { cert: string; key: string };
  /** PEM of the CA; undefined for plain HTTP (then TLS verification is marked skipped, which client-node requires for http). */
  caPem?: string;
  name?: string;
  namespace?: string;
}

export function buildKubeconfig(p: KubeconfigParams): string {
  const name = p.name ?? 'fleet-attach-sim';
  const cluster: Record<string, unknown> = { server: p.url };
  if (p.caPem) cluster['certificate-authority-data'] = b64(p.caPem);
  else cluster['insecure-skip-tls-verify'] = true;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user: p.client ? { 'client-certificate-data': b64(p.client.cert), 'client-key-data': b64(p.client.key) } : { token: p.token } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: p.namespace ?? 'default' } }],
    'current-context': name,
    preferences: {},
  });
}

const b64 = (pem: string) => Buffer.from(pem).toString('base64');

export async function writeFileAtomic(path: string, data: string, mode = 0o600): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  await writeFile(tmp, data, { mode });
  await rename(tmp, path);
}
