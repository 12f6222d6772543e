/**
 * A small JSON client for the scenario driver: requests and watches against a kube-apiserver
 * with the bearer token and CA of a kubeconfig (the admin one of real-cluster.ts). Deliberately
 * not the controller's own client, so that the driver sees the API as any other client does.
 */
import { Agent, request } from 'node:https';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export interface Kube {
  url: string;
  call<T = any>(method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; body: T }>;
  /** Like call, but throws unless the status is 2xx (or listed in `ok`). */
  must<T = any>(method: string, path: string, body?: unknown, opts?: { contentType?: string; ok?: number[] }): Promise<T>;
  watch(path: string, resourceVersion: string, onEvent: (type: string, obj: any) => void): Watcher;
  close(): void;
}

export interface Watcher {
  stop(): void;
  /** Resolves once the stream's response headers came back (the watch is established). */
  ready: Promise<void>;
}

export const MERGE = 'application/merge-patch+json';

export function kubeFromKubeconfig(path: string): Kube {
  const kc = parse(readFileSync(path, 'utf8')) as any;
  const cluster = kc.clusters[0].cluster;
  const url: string = cluster.server;
  const ca = Buffer.from(cluster['certificate-authority-data'], 'base64').toString();
  const token: string = kc.users[0].user.token;
  const agent = new Agent({ keepAlive: true, ca, maxSockets: 16 });
  const headers = (ct?: string): Record<string, string> => ({
    authorization: `Bearer ${token}`,
    accept: 'application/json',
    ...(ct ? { 'content-type': ct } : {}),
  });

  const call = <T>(method: string, path: string, body?: unknown, contentType?: string) =>
    new Promise<{ status: number; body: T }>((ok, fail) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const h = headers(payload === undefined ? undefined : contentType ?? 'application/json');
      // Always framed: Node sends a DELETE body unframed otherwise, which corrupts the keep-alive connection.
      h['content-length'] = String(payload === undefined ? 0 : Buffer.byteLength(payload));
      const req = request(new URL(path, url), { method, agent, headers: h, timeout: 30_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: any = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            /* keep the text */
          }
          ok({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', fail);
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on('error', fail);
      req.end(payload);
    });

  return {
    url,
    call,
    async must<T>(method: string, path: string, body?: unknown, opts: { contentType?: string; ok?: number[] } = {}) {
      const r = await call<T>(method, path, body, opts.contentType);
      if ((r.status >= 200 && r.status < 300) || opts.ok?.includes(r.status)) return r.body;
      throw new Error(`${method} ${path}: ${r.status} ${typeof r.body === 'string' ? r.body : JSON.stringify(r.body)}`);
    },
    watch(path, resourceVersion, onEvent) {
      let stopped = false;
      let rv = resourceVersion;
      let current: ReturnType<typeof request> | undefined;
      let readyResolve!: () => void;
      const ready = new Promise<void>((r) => (readyResolve = r));
      const open = () => {
        if (stopped) return;
        const sep = path.includes('?') ? '&' : '?';
        const u = new URL(`${path}${sep}watch=1&allowWatchBookmarks=true&timeoutSeconds=3600&resourceVersion=${rv}`, url);
        // A watch gets its own connection (no agent), so stopping it never disturbs calls.
        const req = request(u, { method: 'GET', headers: headers(), ca }, (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            if (!stopped) setTimeout(open, 200);
            return;
          }
          readyResolve();
          let buf = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buf += chunk;
            let nl: number;
            while ((nl = buf.indexOf('\n')) >= 0) {
              const line = buf.slice(0, nl).trim();
              buf = buf.slice(nl + 1);
              if (!line) continue;
              const ev = JSON.parse(line) as { type: string; object: any };
              if (ev.type === 'ERROR') {
                // 410 Gone cannot happen on a fresh cluster within a scenario; surface it loudly.
                throw new Error(`watch ${path}: ${JSON.stringify(ev.object)}`);
              }
              if (ev.object?.metadata?.resourceVersion) rv = ev.object.metadata.resourceVersion;
              if (ev.type !== 'BOOKMARK') onEvent(ev.type, ev.object);
            }
          });
          res.on('end', () => {
            if (!stopped) setTimeout(open, 50);
          });
          res.on('error', () => {
            if (!stopped) setTimeout(open, 200);
          });
        });
        req.on('error', () => {
          if (!stopped) setTimeout(open, 200);
        });
        req.end();
        current = req;
      };
      open();
      return {
        ready,
        stop() {
          stopped = true;
          current?.destroy();
        },
      };
    },
    close() {
      agent.destroy();
    },
  };
}
