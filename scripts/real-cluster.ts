/**
 * `npm run real-cluster -- up --dir DIR` starts upstream etcd and kube-apiserver on loopback and
 * returns once the API server is ready, leaving DIR/admin.kubeconfig and
 * DIR/controller.kubeconfig (deploy/rbac.yaml's ServiceAccount); `down --dir DIR` stops them.
 */
import { parseArgs } from 'node:util';
import { down, up } from '../test/real/real-cluster.js';

const usage = 'usage: npm run real-cluster -- up|down --dir DIR';
let parsed;
try {
  parsed = parseArgs({ args: process.argv.slice(2), allowPositionals: true, options: { dir: { type: 'string' } } });
} catch (err) {
  console.error(`${(err as Error).message}\n${usage}`);
  process.exit(2);
}
const [verb] = parsed.positionals;
const dir = parsed.values.dir;
if (!dir || (verb !== 'up' && verb !== 'down') || parsed.positionals.length !== 1) {
  console.error(usage);
  process.exit(2);
}
try {
  if (verb === 'up') {
    const c = await up({ dir });
    console.log(`kube-apiserver ready at ${c.url}\n  admin:      ${c.adminKubeconfig}\n  controller: ${c.controllerKubeconfig}`);
  } else {
    await down(dir);
    console.log(`stopped the control plane in ${dir}`);
  }
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
