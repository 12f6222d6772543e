/** What the conformance case files share: API paths and small helpers over a Target. */
import { call, type Target } from './target.js';

export const NODES = '/api/v1/nodes';
export const PVS = '/api/v1/persistentvolumes';
export const VAS = '/apis/storage.k8s.io/v1/volumeattachments';
export const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';

export const names = (list: any) => (list?.items ?? []).map((i: any) => i.metadata.name).sort();
export const rvOf = (o: any) => o?.metadata?.resourceVersion as string;

/** POSTs `obj`, throwing unless the server answers 201. */
export async function mustCreate(t: Target, path: string, obj: unknown): Promise<any> {
  const a = await call(t, 'POST', path, { body: obj });
  if (a.status !== 201) throw new Error(`${t.name}: POST ${path} answered ${a.status}: ${a.text}`);
  return a.body;
}
