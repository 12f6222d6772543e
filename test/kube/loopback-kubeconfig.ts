// A kubeconfig for a test server on 127.0.0.1: a token user, TLS checks off for https.
import type { Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { loadKubeConfig, type FleetKubeConfig } from '../../src/kube/kube-config.js';

/** Starts `server` listening on a free loopback port and returns a kubeconfig pointing at it. */
export async function loopbackKubeConfig(server: Server, scheme: 'http' | 'https' = 'http'): Promise<FleetKubeConfig> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return loadKubeConfig({ yaml: `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${scheme}://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
` });
}
