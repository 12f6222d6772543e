/**
 * A bare Kubernetes API client for benches: paged lists and watches over HTTPS with a bearer
 * token, handing the caller each watch line as received text. Deliberately not client-node:
 * the bench must see the raw bytes (to time JSON.parse on them) and must stay light next to
 * the processes it measures.
 */
import https from 'node:https';
import type { IncomingMessage } from 'node:http';

export interface RawKubeTarget {
  url: string;
  token: string;
  /** PEM of the CA the server's certificate is checked against. */
  ca: string | undefined;
}

export interface RawWatch {
  /** Resolves once the server answered 200 (events from then on are delivered). */
  readonly started: Promise<void>;
  /** Resolves when the stream ends (closed by either side). */
  readonly ended: Promise<void>;
  close(): void;
}

export interface RawKube {
  getJson<T>(path: string): Promise<T>;
  /** Every item of a paged list (`limit` per page); resolves with the list's resourceVersion. */
  listAll(path: string, onItem: (item: unknown) => void, limit?: number): Promise<string>;
  /** Watches from `resourceVersion`; `onLine` gets each event line, `onEnd` any early end. */
  watch(path: string, resourceVersion: string, onLine: (line: string) => void): RawWatch;
  close(): void;
}

export function createRawKube(t: RawKubeTarget): RawKube {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 16, ...(t.ca ? { ca: t.ca } : { rejectUnauthorized: false }) });
  const headers = { authorization: `Bearer ${t.token}`, accept: 'application/json' };
  const open = (path: string, signal?: AbortSignal) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const req = https.get(new URL(path, t.url), { agent, headers, ...(signal ? { signal } : {}) }, resolve);
      req.on('error', reject);
    });
  const readBody = async (res: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const getJson = async <T>(path: string): Promise<T> => {
    const res = await open(path);
    const body = await readBody(res);
    if (res.statusCode !== 200) throw new Error(`GET ${path}: HTTP ${res.statusCode}: ${body.slice(0, 300)}`);
    return JSON.parse(body) as T;
  };
  return {
    getJson,
    async listAll(path, onItem, limit = 500) {
      let cont = '';
      let rv = '';
      do {
        const sep = path.includes('?') ? '&' : '?';
        const page = await getJson<{ items?: unknown[]; metadata?: { continue?: string; resourceVersion?: string } }>(
          `${path}${sep}limit=${limit}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
        );
        for (const item of page.items ?? []) onItem(item);
        rv = page.metadata?.resourceVersion ?? rv;
        cont = page.metadata?.continue ?? '';
      } while (cont);
      return rv;
    },
    watch(path, resourceVersion, onLine) {
      const abort = new AbortController();
      let startedOk!: () => void;
      let startFailed!: (e: unknown) => void;
      const started = new Promise<void>((res, rej) => ((startedOk = res), (startFailed = rej)));
      const ended = (async () => {
        try {
          const res = await open(`${path}?watch=1&resourceVersion=${encodeURIComponent(resourceVersion)}&timeoutSeconds=3600`, abort.signal);
          if (res.statusCode !== 200) throw new Error(`watch ${path}: HTTP ${res.statusCode}: ${(await readBody(res)).slice(0, 300)}`);
          startedOk();
          res.setEncoding('utf8');
          let rest = '';
          for await (const chunk of res) {
            const text = rest + (chunk as string);
            let from = 0;
            for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
              if (nl > from) onLine(text.slice(from, nl));
              from = nl + 1;
            }
            rest = text.slice(from);
          }
        } catch (err) {
          startFailed(err);
          if (!abort.signal.aborted) throw err;
        }
      })();
      ended.catch(() => {}); // callers that care await `ended`
      return { started, ended, close: () => abort.abort() };
    },
    close: () => agent.destroy(),
  };
}
