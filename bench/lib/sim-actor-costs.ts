/**
 * The actors' event handling, CPU time per event, in any checkout of this project: `node
 * --import tsx bench/lib/sim-actor-costs.ts [ROOT]` (default: this tree) feeds ROOT's fleet
 * index and attacher 100,000 pods, PVs and VolumeAttachments (ADDED, then MODIFIED in a
 * scattered order) and resolves each pod's volumes. Run it alternately against two checkouts
 * to compare them side by side.
 */
const root = process.argv[2] ?? new URL('../..', import.meta.url).pathname;
// CPU time of the process (user + system, collectors included), not wall time: the machine is shared.
const cpuNow = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const { FleetIndex } = await import(`${root}/src/sim/actors/fleet-index.ts`);
const { createAttacher } = await import(`${root}/src/sim/actors/attacher.ts`);
const { createPrng } = await import(`${root}/src/sim/actors/prng.ts`);
const N = 100_000;
const pods = Array.from({ length: N }, (_, i) => ({ metadata: { namespace: 'fleet', name: `pod-${String(i).padStart(7, '0')}` }, spec: { nodeName: `node-${String(i % 10000).padStart(6, '0')}`, volumes: [{ name: 'd', persistentVolumeClaim: { claimName: `data-${String(i).padStart(7, '0')}` } }] }, status: { phase: 'Running' } }));
const pvs = Array.from({ length: N }, (_, i) => ({ metadata: { name: `pv-${i}` }, spec: { claimRef: { namespace: 'fleet', name: `data-${String(i).padStart(7, '0')}` }, csi: { driver: 'd.csi', volumeHandle: `vol-${i}` }, accessModes: ['ReadWriteOnce'] } }));
const vas = Array.from({ length: N }, (_, i) => ({ metadata: { name: `csi-${(i * 2654435761 >>> 0).toString(16)}${i}`, finalizers: ['external-attacher/d.csi'] }, spec: { attacher: 'd.csi', nodeName: pods[i].spec.nodeName, source: { persistentVolumeName: `pv-${i}` } }, status: { attached: true } }));
const time = (f: () => void) => { const t = cpuNow(); f(); return ((cpuNow() - t) * 1e6) / N; };
const rows: Record<string, number[]> = { indexAdd: [], indexModify: [], podVolumes: [], attacherAdd: [], attacherModify: [] };
for (let pass = 0; pass < 5; pass++) {
  const index = new FleetIndex();
  rows.indexAdd.push(time(() => { for (let i = 0; i < N; i++) { index.applyEvent('ADDED', 'persistentvolumes', pvs[i]); index.applyEvent('ADDED', 'pods', pods[i]); } }));
  rows.indexModify.push(time(() => { for (let i = 0; i < N; i++) index.applyEvent('MODIFIED', 'pods', pods[(i * 7919) % N]); }));
  const recs = Array.from({ length: N }, (_, i) => (index.pod ? index.pod(`fleet/${pods[i].metadata.name}`) : index.pods.get(`fleet/${pods[i].metadata.name}`)));
  let sink = 0;
  rows.podVolumes.push(time(() => { for (let i = 0; i < N; i++) sink += index.podVolumes(recs[(i * 7919) % N]).length; }));
  const store = { mutate: () => undefined } as any;
  const a = createAttacher({ store, prng: createPrng(1), driver: 'd.csi', attachLatencyMs: 1000, detachLatencyMs: 1000, attachFailureRate: 0 });
  rows.attacherAdd.push(time(() => { for (let i = 0; i < N; i++) { a.onEvent('ADDED', 'persistentvolumes', pvs[i]); a.onEvent('ADDED', 'volumeattachments', vas[i]); } }));
  rows.attacherModify.push(time(() => { for (let i = 0; i < N; i++) a.onEvent('MODIFIED', 'volumeattachments', vas[(i * 7919) % N]); }));
  if (sink === -1) console.log(sink);
}
const min = (a: number[]) => Math.min(...a);
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log(`${root}: ns per event (min / median of 5 passes, ${N} objects)`);
for (const [k, v] of Object.entries(rows)) console.log(`  ${k.padEnd(15)} ${min(v).toFixed(0)} / ${med(v).toFixed(0)}`);
