// A list that works and a watch the server refuses (RBAC granting list but not watch, a proxy
// breaking long polls): as client-go's reflector does, the store is relisted after backoff, so
// it keeps following the cluster, and the request hook reports the refusal's status.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadKubeConfig } from '../../src/kube/kube-config.js';
import { POD_KIND } from '../../src/kube/projections/pod.js';
import { createReflector } from '../../src/kube/reflector.js';
import { startFakeKubeServer, waitFor } from './fake-kube-server.js';

const pod = (n: string) => ({ metadata: { name: n, namespace: 'ns', uid: `u-${n}` }, spec: { nodeName: 'n1' }, status: { phase: 'Running' } });

test('a watch that can never start still lets the store catch up (relist)', async () => {
  const srv = await startFakeKubeServer();
  srv.putSilently('/api/v1/pods', pod('a'));
  srv.failNext((_m, u) => u.searchParams.get('watch') === 'true', 403, 1_000_000);
  const kc = loadKubeConfig({ yaml: srv.kubeconfigYaml });
  const codes: number[] = [];
  const r = createReflector({ kc, kind: POD_KIND, backoff: { initialMs: 10, maxMs: 50 }, onRequest: (q) => { if (q.verb === 'watch') codes.push(q.code); } });
  void r.start();
  await waitFor(() => r.synced(), 'sync');
  srv.put('/api/v1/pods', pod('b'));
  srv.remove('/api/v1/pods', 'ns/a');
  await new Promise((res) => setTimeout(res, 1500));
  const s = r.stats();
  const keys = [...r.keys()];
  await r.stop();
  kc.close();
  await srv.close();
  assert.deepEqual(keys, ['ns/b'], 'the store follows the cluster');
  assert.ok(s.relists > 0);
  assert.deepEqual([...new Set(codes)], [403]);
});
