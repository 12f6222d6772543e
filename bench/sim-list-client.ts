/**
 * The client side of `bench/sim-list.bench.ts`, run as a child process (so that the server
 * process's CPU time is the simulator's alone): a paged list over keep-alive HTTPS the way the
 * controller reads one (src/kube/list-pages.ts), the next page requested as soon as the current
 * page's continue token shows in the start of its body, at most one page ahead, and each page
 * JSON-parsed. Per page it records when the request went out, when the first and the last byte
 * arrived. Plain JavaScript source (no TypeScript loader in the child).
 */
export const LIST_CLIENT_SOURCE = String.raw`
const https = require('node:https');
const { url, token, ca } = JSON.parse(process.env.FA_SIM_LIST_CLIENT);
const agent = new https.Agent({ keepAlive: true, maxSockets: 4, ca });
const headers = { authorization: 'Bearer ' + token, accept: 'application/json' };
const CONTINUE = /"continue"\s*:\s*"([^"]*)"/;

/** One page: resolves {body, sentAt, firstAt, endAt}; calls onToken(token|undefined) once the head shows it. */
function page(path, onToken) {
  return new Promise((resolve, reject) => {
    const sentAt = performance.now();
    let firstAt = 0;
    https.get(url + path, { agent, headers }, (res) => {
      const chunks = [];
      let size = 0;
      let tokenSeen = false;
      res.on('data', (c) => {
        if (!firstAt) firstAt = performance.now();
        chunks.push(c);
        size += c.length;
        if (!tokenSeen && res.statusCode === 200) {
          const head = (chunks.length === 1 ? c : Buffer.concat(chunks, size)).toString('latin1', 0, Math.min(size, 16384));
          const at = head.indexOf('"items"');
          if (at >= 0) {
            tokenSeen = true;
            const m = CONTINUE.exec(head.slice(0, at));
            onToken(m && m[1] ? m[1] : undefined);
          }
        }
      });
      res.on('end', () => {
        const body = Buffer.concat(chunks, size).toString('utf8');
        if (res.statusCode !== 200) return reject(new Error('list failed: ' + res.statusCode + ' ' + body.slice(0, 200)));
        resolve({ body, sentAt, firstAt, endAt: performance.now() });
      });
      res.on('error', reject);
    }).on('error', reject);
  });
}

async function pagedList(path, limit, prefetch) {
  const t0 = performance.now();
  const pages = [];
  let items = 0;
  let bytes = 0;
  let parseMs = 0;
  let cont = '';
  let ahead;
  const request = (c) => {
    let resolveToken;
    const token = new Promise((r) => (resolveToken = r));
    const p = page(path + '?limit=' + limit + (c ? '&continue=' + encodeURIComponent(c) : ''), (t) => resolveToken(t));
    return { cont: c, token, page: p };
  };
  let current = request('');
  for (;;) {
    if (prefetch) {
      current.token.then((t) => { if (t && (!ahead || ahead.cont !== t)) ahead = request(t); });
    }
    const r = await current.page;
    const p0 = performance.now();
    const body = JSON.parse(r.body);
    parseMs += performance.now() - p0;
    items += body.items.length;
    bytes += Buffer.byteLength(r.body);
    pages.push({ waitMs: r.firstAt - r.sentAt, recvMs: r.endAt - r.firstAt, bytes: Buffer.byteLength(r.body) });
    cont = body.metadata.continue || '';
    if (!cont) break;
    current = ahead && ahead.cont === cont ? ahead : request(cont);
    ahead = undefined;
  }
  return { items, bytes, ms: performance.now() - t0, parseMs, pages };
}

process.on('message', async (msg) => {
  try {
    if (msg.op === 'list') process.send({ op: 'list', result: await pagedList(msg.path, msg.limit, msg.prefetch) });
    else if (msg.op === 'stop') {
      agent.destroy();
      process.send({ op: 'stop' });
      process.disconnect();
    }
  } catch (err) {
    process.send({ op: 'error', error: String((err && err.stack) || err) });
  }
});
`;
