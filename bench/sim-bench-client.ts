/**
 * The client side of the simulator bench, run in a worker thread so that it does not share
 * the server's event loop: a paged list of every pod (pages of 500, each page JSON-parsed
 * as a client must to find `continue`), N watchers counting the events they receive, and the
 * controller's writes (VolumeAttachment creates, node status merge patches) sent by N
 * concurrent requests over one keep-alive agent, each answer read in full as a client must.
 * Plain JavaScript source, evaluated in a worker or a child process (no TypeScript loader
 * needed there).
 */
export const CLIENT_SOURCE = String.raw`
const wt = require('node:worker_threads');
// In a worker thread, or in a child process (IPC channel, config in FA_SIM_BENCH_CLIENT).
const parentPort = wt.parentPort || { on: (e, f) => process.on(e, f), postMessage: (m) => process.send(m) };
const workerData = wt.parentPort ? wt.workerData : JSON.parse(process.env.FA_SIM_BENCH_CLIENT);
const https = require('node:https');
const { url, token, ca } = workerData;
const agent = new https.Agent({ keepAlive: true, maxSockets: 8, ca });
const headers = { authorization: 'Bearer ' + token, accept: 'application/json' };

function get(path) {
  return new Promise((resolve, reject) => {
    https.get(url + path, { agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

const writeAgents = new Map();
function writeAgent(n) {
  let a = writeAgents.get(n);
  if (!a) writeAgents.set(n, (a = new https.Agent({ keepAlive: true, maxSockets: n, ca })));
  return a;
}

function send(method, path, body, contentType, agentFor) {
  return new Promise((resolve) => {
    const data = Buffer.from(JSON.stringify(body));
    const req = https.request(url + path, { method, agent: agentFor, headers: { ...headers, 'content-type': contentType, 'content-length': data.length } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, bytes: Buffer.concat(chunks).length }));
      res.on('error', () => resolve({ status: 0, bytes: 0 }));
    });
    req.on('error', () => resolve({ status: 0, bytes: 0 }));
    req.end(data);
  });
}

/** Sends every request of 'reqs' ({method, path, body, contentType}) with 'concurrency' in flight. */
async function sendAll(reqs, concurrency) {
  const agentFor = writeAgent(concurrency);
  const lat = new Float64Array(reqs.length);
  const codes = {};
  let next = 0;
  const t0 = performance.now();
  async function lane() {
    while (next < reqs.length) {
      const i = next++;
      const r = reqs[i];
      const s = performance.now();
      const res = await send(r.method, r.path, r.body, r.contentType, agentFor);
      lat[i] = performance.now() - s;
      codes[res.status] = (codes[res.status] || 0) + 1;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane));
  const ms = performance.now() - t0;
  lat.sort();
  const q = (p) => Math.round(lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] * 10) / 10;
  return { count: reqs.length, ms, codes, p50: q(0.5), p99: q(0.99) };
}

function creates(items, driver) {
  return items.map((it) => ({
    method: 'POST', path: '/apis/storage.k8s.io/v1/volumeattachments', contentType: 'application/json',
    body: { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: it.name }, spec: { attacher: driver, nodeName: it.node, source: { persistentVolumeName: it.pv } } },
  }));
}

function patches(items) {
  return items.map((it) => ({
    method: 'PATCH', path: '/api/v1/nodes/' + it.node + '/status', contentType: 'application/merge-patch+json',
    body: { status: { volumesAttached: it.volumes.map((name) => ({ name, devicePath: '' })) } },
  }));
}

async function pagedList(path, limit) {
  const t0 = performance.now();
  let cont = '';
  let items = 0;
  let pages = 0;
  let bytes = 0;
  do {
    const r = await get(path + '?limit=' + limit + (cont ? '&continue=' + encodeURIComponent(cont) : ''));
    if (r.status !== 200) throw new Error('list failed: ' + r.status + ' ' + r.body.slice(0, 200));
    const page = JSON.parse(r.body);
    items += page.items.length;
    bytes += r.body.length;
    pages++;
    cont = page.metadata.continue || '';
  } while (cont);
  return { items, pages, bytes, ms: performance.now() - t0 };
}

const watchers = [];
function startWatch(path) {
  return new Promise((resolve, reject) => {
    const w = { events: 0, firstAt: 0, lastAt: 0, req: undefined };
    w.req = https.get(url + path, { headers, ca, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error('watch failed: ' + res.statusCode));
      let carry = '';
      res.setEncoding('utf8');
      res.on('data', (s) => {
        let n = 0;
        let i = -1;
        while ((i = s.indexOf('\n', i + 1)) !== -1) n++;
        if (n > 0) {
          const now = performance.timeOrigin + performance.now();
          if (w.events === 0) w.firstAt = now;
          w.events += n;
          w.lastAt = now;
        }
      });
      res.on('error', () => {});
      resolve(w);
    });
    w.req.on('error', () => {});
    watchers.push(w);
  });
}

parentPort.on('message', async (msg) => {
  try {
    if (msg.op === 'list') parentPort.postMessage({ op: 'list', result: await pagedList(msg.path, msg.limit) });
    else if (msg.op === 'watch') {
      for (const w of watchers) w.req.destroy();
      watchers.length = 0;
      const paths = msg.paths || Array.from({ length: msg.count }, () => msg.path);
      for (const p of paths) await startWatch(p);
      parentPort.postMessage({ op: 'watch' });
    } else if (msg.op === 'creates') {
      parentPort.postMessage({ op: 'creates', result: await sendAll(creates(msg.items, msg.driver), msg.concurrency) });
    } else if (msg.op === 'patches') {
      parentPort.postMessage({ op: 'patches', result: await sendAll(patches(msg.items), msg.concurrency) });
    } else if (msg.op === 'counts') parentPort.postMessage({ op: 'counts', result: watchers.map((w) => ({ events: w.events, firstAt: w.firstAt, lastAt: w.lastAt })) });
    else if (msg.op === 'stop') {
      for (const w of watchers) w.req.destroy();
      agent.destroy();
      for (const a of writeAgents.values()) a.destroy();
      parentPort.postMessage({ op: 'stop' });
      if (!wt.parentPort) process.disconnect();
    }
  } catch (err) {
    parentPort.postMessage({ op: 'error', error: String(err && err.stack || err) });
  }
});
`;
