/**
 * The client side of the simulator bench, run in a worker thread so that it does not share
 * the server's event loop: a paged list of every pod (pages of 500, each page JSON-parsed
 * as a client must to find `continue`), and N watchers counting the events they receive.
 * Plain JavaScript source, evaluated in the worker (no TypeScript loader needed there).
 */
export const CLIENT_SOURCE = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
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
      for (let i = 0; i < msg.count; i++) await startWatch(msg.path);
      parentPort.postMessage({ op: 'watch' });
    } else if (msg.op === 'counts') parentPort.postMessage({ op: 'counts', result: watchers.map((w) => ({ events: w.events, firstAt: w.firstAt, lastAt: w.lastAt })) });
    else if (msg.op === 'stop') {
      for (const w of watchers) w.req.destroy();
      agent.destroy();
      parentPort.postMessage({ op: 'stop' });
    }
  } catch (err) {
    parentPort.postMessage({ op: 'error', error: String(err && err.stack || err) });
  }
});
`;
