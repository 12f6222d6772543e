/**
 * Measures the reflector's paged list (fetch, JSON.parse, projection) against the in-process
 * simulator, and the generated client's deserialize cost for comparison. Not a test (no
 * assertions; numbers depend on the machine): run it by hand, e.g.
 *   LOG_LEVEL=warn node --import tsx test/kube/list-throughput.measure.ts 2000 10
 */
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import { loadKubeConfig } from '../../src/kube/kube-config.js';
import { NODE_KIND, POD_KIND, PVC_KIND, PV_KIND, type ResourceKind } from '../../src/kube/projections/index.js';
import { createReflector } from '../../src/kube/reflector.js';
import { getBody } from '../../src/kube/raw-request.js';
import { startSimulator } from '../../src/sim/server/index.js';

const nodes = Number(process.argv[2] ?? 2000), ppn = Number(process.argv[3] ?? 10);
const t0 = performance.now();
const sim = await startSimulator({ fleet: { nodes, podsPerNode: ppn, attacher: false, kubelet: false } });
console.log(`populated ${nodes}x${ppn} in ${Math.round(performance.now() - t0)} ms`);
const kc = loadKubeConfig({ yaml: sim.kubeconfig, env: {} });
for (const pageSize of [500, 5000]) {
  for (const kind of [POD_KIND, NODE_KIND, PVC_KIND, PV_KIND] as Array<ResourceKind<unknown>>) {
    const r = createReflector({ kc, kind, pageSize });
    const h0 = process.memoryUsage().heapUsed;
    void r.start();
    while (!r.synced()) await new Promise((res) => setTimeout(res, 5));
    const s = r.stats().lastList;
    if (!s) throw new Error('no list summary');
    const heap = process.memoryUsage().heapUsed - h0;
    await r.stop();
    console.log(`${kind.resource.padEnd(22)} page=${pageSize} items=${s.items} pages=${s.pages} MB=${(s.bytes / 1e6).toFixed(1)} total=${s.totalMs.toFixed(0)}ms fetch=${s.fetchMs.toFixed(0)} parse=${s.parseMs.toFixed(0)} project=${s.projectMs.toFixed(0)} items/s=${Math.round(s.items / (s.totalMs / 1000))} parseMB/s=${(s.bytes / 1e6 / (s.parseMs / 1000)).toFixed(0)} heapΔ≈${(heap / 1e6).toFixed(0)}MB`);
  }
}
// generated-client deserialize cost on one 500-pod page, for comparison
const page = await getBody(kc, '/api/v1/pods', { limit: 500 });
const text = page.body.toString('utf8');
let a = performance.now(); for (let i = 0; i < 10; i++) JSON.parse(text); const parse = (performance.now() - a) / 10;
const parsed = JSON.parse(text);
a = performance.now(); for (let i = 0; i < 10; i++) ObjectSerializer.deserialize(parsed, 'V1PodList', ''); const deser = (performance.now() - a) / 10;
a = performance.now(); for (let i = 0; i < 10; i++) for (const it of parsed.items) POD_KIND.project(it); const proj = (performance.now() - a) / 10;
console.log(`one 500-pod page (${(text.length / 1e6).toFixed(2)} MB): JSON.parse ${parse.toFixed(1)} ms, +deserialize ${deser.toFixed(1)} ms (generated client), project ${proj.toFixed(1)} ms`);
kc.close();
await sim.stop();
