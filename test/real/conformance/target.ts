/**
 * One API server the conformance suite talks to, the simulator or a real kube-apiserver, as
 * raw HTTP so that status codes, error bodies and watch frames are seen as a client sees them.
 * HTTP/1.1 by default; `h2` sends the same request over HTTP/2 (ALPN).
 */
import { connect } from 'node:http2';
import { request } from 'node:https';

export interface Target {
  name: 'sim' | 'real';
  url: string;
  token: string;
  ca: string;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

export interface CallOptions {
  body?: unknown;
  contentType?: string;
  accept?: string;
  h2?: boolean;
}

export function call(t: Target, method: string, path: string, opts: CallOptions = {}): Promise<Answer> {
  const payload = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  const headers: Record<string, string> = { authorization: `Bearer ${t.token}`, accept: opts.accept ?? 'application/json' };
  if (payload !== undefined) {
    headers['content-type'] = opts.contentType ?? 'application/json';
    // Explicit: Node sends a DELETE's body with neither a length nor chunked framing otherwise.
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  if (opts.h2) return callH2(t, method, path, headers, payload);
  return new Promise((ok, fail) => {
    const u = new URL(path, t.url);
    const req = request(u, { method, headers, ca: t.ca, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok(answer(res.statusCode ?? 0, res.headers, Buffer.concat(chunks).toString('utf8'))));
      res.on('error', fail);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on('error', fail);
    req.end(payload);
  });
}

function callH2(t: Target, method: string, path: string, headers: Record<string, string>, payload?: string): Promise<Answer> {
  return new Promise((ok, fail) => {
    const session = connect(t.url, { ca: t.ca });
    session.on('error', fail);
    const req = session.request({ ':method': method, ':path': path, ...headers });
    const chunks: Buffer[] = [];
    let status = 0;
    let resHeaders: Record<string, string | string[] | undefined> = {};
    req.on('response', (h) => {
      status = Number(h[':status']);
      resHeaders = { ...(h as Record<string, string | string[] | undefined>), 'x-alpn': session.alpnProtocol };
    });
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      session.close();
      ok(answer(status, resHeaders, Buffer.concat(chunks).toString('utf8')));
    });
    req.on('error', fail);
    req.end(payload);
  });
}

function answer(status: number, headers: Answer['headers'], text: string): Answer {
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status, headers, body, text };
}

export interface WatchFrame {
  type: string;
  object: any;
}

/**
 * Opens a watch and collects its frames until `until` says stop (given the frames so far) or
 * `ms` passes; returns the HTTP status and the frames. The stream is closed either way.
 */
export function watch(t: Target, path: string, until: (frames: WatchFrame[]) => boolean, ms = 10_000): Promise<{ status: number; frames: WatchFrame[]; body?: any }> {
  return new Promise((ok, fail) => {
    const u = new URL(path, t.url);
    const frames: WatchFrame[] = [];
    let status = 0;
    let done = false;
    const finish = (body?: any) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      ok({ status, frames, body });
    };
    const timer = setTimeout(() => finish(), ms);
    const req = request(u, { method: 'GET', headers: { authorization: `Bearer ${t.token}`, accept: 'application/json' }, ca: t.ca }, (res) => {
      status = res.statusCode ?? 0;
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        buf += c;
        if (status !== 200) return;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line) frames.push(JSON.parse(line) as WatchFrame);
        }
        if (until(frames)) finish();
      });
      res.on('end', () => finish(status === 200 ? undefined : safeJson(buf)));
      res.on('error', () => finish());
    });
    req.on('error', (err) => (done ? undefined : fail(err)));
    req.end();
  });
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

/** The parts of a `Status` error body clients act on. */
export function statusOf(a: Answer): { code: number; kind?: string; status?: string; reason?: string; detailsKind?: string } {
  const b = a.body ?? {};
  return { code: a.status, kind: b.kind, status: b.status, reason: b.reason, detailsKind: b.details?.kind };
}
