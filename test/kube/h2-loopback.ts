/**
 * A cleartext HTTP/2 server on loopback that answers each request with `<method> <body length>`,
 * and a client session to it, for tests of what the kube client does to Node's HTTP/2 objects.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

export interface H2Loopback {
  client: http2.ClientHttp2Session;
  /** POSTs `body` on `client` (by `request`, default the session's own) and resolves with the answer. */
  post(body: string, request?: () => http2.ClientHttp2Stream): Promise<string>;
}

/**
 * Runs `run` against a fresh server and client; `onServerSession` sees each server session. The
 * client is closed gracefully at the end (it only closes once no stream is open), then both go.
 */
export async function withH2Loopback(run: (h: H2Loopback) => Promise<void>, onServerSession?: (s: http2.ServerHttp2Session) => void): Promise<void> {
  const server = http2.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => res.end(`${req.method} ${body.length}`));
  });
  if (onServerSession) server.on('session', onServerSession);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const post = (body: string, request = () => client.request({ ':method': 'POST', ':path': '/' })) => new Promise<string>((resolve, reject) => {
    const s = request();
    let text = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => (text += d));
    s.on('end', () => resolve(text));
    s.on('error', reject);
    s.end(body);
  });
  try {
    await run({ client, post });
    const closed = new Promise<void>((r) => client.once('close', r));
    client.close();
    await closed;
  } finally {
    client.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }
}
