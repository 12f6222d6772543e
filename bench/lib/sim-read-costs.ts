/**
 * The simulator's reads, CPU time per object, in any checkout of this project: `node --import
 * tsx bench/lib/sim-read-costs.ts [ROOT] [NODES]` runs ROOT's own store, fleet generator and
 * read handlers (default: this tree; NODES × 10 pods, default 3000): GET by name through the
 * handler to its response bytes, a list page of 500 the same way, and the store's `getJson` and
 * `listPage`. Run it alternately against two checkouts to compare them side by side. Only the
 * API both have is used.
 */
const root = process.argv[2] ?? new URL('../..', import.meta.url).pathname;
// CPU time of the process (user + system, collectors included), not wall time: the machine is shared.
const cpuNow = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const nodes = Number(process.argv[3] ?? 3000);
const { createSimStore } = await import(`${root}/src/sim/store/index.ts`);
const { populateFleet } = await import(`${root}/src/sim/actors/index.ts`);
const { handleGet, handleList } = await import(`${root}/src/sim/server/read-handlers.ts`);
const { RESOURCES } = await import(`${root}/src/sim/store/resources.ts`);
const store = createSimStore({ watchWindow: 1000 });
await populateFleet(store, { nodes, podsPerNode: 10, seed: 1 });
const pods = store.listPage('pods', {}).items.map((j: string) => JSON.parse(j).metadata);
const n = pods.length;
let sink = 0;
const res = { writeHead() { return this; }, setHeader() {}, end(b: any, cb?: () => void) { sink += b.length; if (typeof cb === 'function') cb(); } } as any;
const ctx = { store, hub: undefined };
const info = RESOURCES.pods;
const order = Array.from({ length: n }, (_, i) => (i * 7919) % n);
function getJson(reps: number) {
  const t = cpuNow();
  for (let r = 0; r < reps; r++) for (const i of order) sink += store.getJson('pods', pods[i].namespace, pods[i].name).length;
  return ((cpuNow() - t) * 1e6) / (reps * n); // ns per read
}
const q = new URLSearchParams();
function httpGet(reps: number) {
  const t = cpuNow();
  for (let r = 0; r < reps; r++) for (const i of order) handleGet(ctx, { info, namespace: pods[i].namespace, name: pods[i].name }, q, 'application/json', res);
  return ((cpuNow() - t) * 1e6) / (reps * n);
}
function storePages(reps: number) {
  const t = cpuNow();
  let items = 0;
  for (let r = 0; r < reps; r++) {
    let after: string | undefined;
    for (;;) {
      const p = store.listPage('pods', { limit: 500, after });
      for (const s of p.items) sink += s.length;
      items += p.items.length;
      if (!p.more) break;
      after = p.lastKey;
    }
  }
  return ((cpuNow() - t) * 1e6) / items;
}
async function httpPages(reps: number) {
  const t = cpuNow();
  let items = 0;
  for (let r = 0; r < reps; r++) {
    let cont: string | undefined;
    for (;;) {
      const qs = new URLSearchParams({ limit: '500' });
      if (cont) qs.set('continue', cont);
      let body: Buffer | undefined;
      const r2 = { writeHead() { return this; }, setHeader() {}, end(b: Buffer, cb?: () => void) { body = b; if (typeof cb === 'function') cb(); } } as any;
      await handleList(ctx, { info }, qs, 'application/json', r2);
      // Only the tail: the continue token (no parse of the page).
      const s = body!.subarray(0, 400).toString('latin1');
      const m = /"continue":"([^"]+)"/.exec(s);
      items += 500;
      if (!m) break;
      cont = m[1];
    }
  }
  return ((cpuNow() - t) * 1e6) / items;
}
const fmt = (x: number) => x.toFixed(0);
const rows: Record<string, number[]> = { getJson: [], httpGet: [], storePage: [], httpPage: [] };
for (let pass = 0; pass < 5; pass++) {
  rows.getJson.push(getJson(4));
  rows.httpGet.push(httpGet(2));
  rows.storePage.push(storePages(4));
  rows.httpPage.push(await httpPages(4));
}
const min = (a: number[]) => Math.min(...a);
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log(`${root} pods=${n}: ns per object (min / median of 5 passes)`);
for (const [k, v] of Object.entries(rows)) console.log(`  ${k.padEnd(10)} ${fmt(min(v))} / ${fmt(med(v))}`);
if (sink === 42) console.log('');
