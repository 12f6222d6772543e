/**
 * Raw GETs for bulk reads (paged lists), bypassing the generated client.
 *
 * The generated client buffers the body, JSON.parses it and then walks it again with
 * `ObjectSerializer.deserialize` (about 2× the parse cost, ecosystem.md §1.4) into class
 * instances we would immediately project and drop. Here client-node still does authentication
 * and TLS (`kc.applyToFetchOptions`, which also hands us the shared keep-alive agent), and
 * node-fetch (client-node 1.4's own HTTP client, a dependency of it) sends the request; the body
 * is parsed once with JSON.parse. Node's global fetch is not used: it is undici-based and ignores
 * `agent`, so it would bypass the TLS material and the shared agent.
 */
import fetch from 'node-fetch';
import type { FleetKubeConfig } from './kube-config.js';
import { KubeHttpError, parseRetryAfter, parseStatusBody } from './kube-errors.js';

export { KubeHttpError };

export type Query = Record<string, string | number | boolean | undefined>;

export interface GetBodyOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /**
   * Called on a 2xx response with the start of the body (latin1-decoded, at most
   * {@link HEAD_MAX_BYTES}) each time more of it arrives, until it returns true or that much has
   * arrived; lets a caller act on the list metadata before the rest of the body is in.
   */
  onHead?(head: string): boolean;
}

/** How much of a body {@link GetBodyOptions.onHead} is shown at most. */
export const HEAD_MAX_BYTES = 16 * 1024;

/** A 2xx response's body, unparsed. */
export interface RawBodyResponse {
  status: number;
  /** The whole body (may be a view into a larger buffer: one network chunk). */
  body: Buffer;
  /** Time from sending the request to the whole body received, ms. */
  fetchMs: number;
}

/**
 * GETs `path` with `query` and returns the body's bytes: the caller parses them where it likes
 * (list-page.ts, perhaps in a worker). Rejects with {@link KubeHttpError} on a non-2xx status,
 * with node-fetch's error on network failure, timeout (`timeoutMs`) or abort.
 */
export async function getBody(kc: FleetKubeConfig, path: string, query: Query, opts: GetBodyOptions = {}): Promise<RawBodyResponse> {
  const url = new URL(kc.server() + path);
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
  const init = await kc.applyToFetchOptions({});
  init.method = 'GET';
  init.headers = { ...headersOf(init.headers), Accept: 'application/json' };
  const signals = [opts.signal, opts.timeoutMs ? AbortSignal.timeout(opts.timeoutMs) : undefined].filter((s): s is AbortSignal => !!s);
  if (signals.length > 0) init.signal = (signals.length === 1 ? signals[0] : AbortSignal.any(signals)) as typeof init.signal;
  const t0 = performance.now();
  const res = await fetch(url.toString(), init);
  const ok = res.status >= 200 && res.status <= 299;
  const body = await readBodyBytes(res.body, ok ? opts.onHead : undefined);
  const fetchMs = performance.now() - t0;
  if (!ok) throw httpError('GET', path, res.status, res.headers.get('retry-after'), body.toString('utf8'));
  return { status: res.status, body, fetchMs };
}

/** The {@link KubeHttpError} for a non-2xx response with body `text` (a Status, or anything). */
export function httpError(method: string, path: string, status: number, retryAfter: string | null, text: string): KubeHttpError {
  const s = parseStatusBody(text);
  const retryAfterMs = parseRetryAfter(retryAfter ?? undefined);
  return new KubeHttpError(status, s.reason, `${method} ${path}: HTTP ${status}${s.message ? `: ${s.message}` : ''}`, retryAfterMs, s.message);
}

/**
 * The whole body as UTF-8 text, showing its start to `onHead` as it arrives. Reads with 'data'
 * events rather than async iteration: a page arrives in dozens of chunks, and a promise per
 * chunk is measurable against the parse.
 */
export function readBody(body: NodeJS.ReadableStream | null, onHead: ((head: string) => boolean) | undefined): Promise<string> {
  return collect(body, onHead, (b) => b.toString('utf8'));
}

/** As {@link readBody}, the bytes. */
export function readBodyBytes(body: NodeJS.ReadableStream | null, onHead: ((head: string) => boolean) | undefined): Promise<Buffer> {
  return collect(body, onHead, (b) => b);
}

/**
 * Both readers: one promise per body, `finish` applied to its bytes (a write's response is on the
 * hot path). Once settled, the reader takes its listeners off the body and leaves the shared
 * {@link ignoreLateError} in their place: Node 20 keeps a finished HTTP/2 stream reachable until
 * a full collection (see raw-write.ts, sendH2), and listeners left on it would keep the chunks and
 * the promise's value there too.
 */
function collect<R>(body: NodeJS.ReadableStream | null, onHead: ((head: string) => boolean) | undefined, finish: (bytes: Buffer) => R): Promise<R> {
  if (!body) return Promise.resolve(finish(Buffer.alloc(0)));
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let head = onHead;
    const onData = (c: Buffer | string) => {
      const b = typeof c === 'string' ? Buffer.from(c) : c;
      chunks.push(b);
      size += b.length;
      if (!head) return;
      const start = chunks.length === 1 ? b : Buffer.concat(chunks, size);
      let done = size >= HEAD_MAX_BYTES;
      try {
        done = head(start.toString('latin1', 0, Math.min(size, HEAD_MAX_BYTES))) || done;
      } catch {
        done = true; // a hint only: a throwing callback must not break the read
      }
      if (done) head = undefined;
    };
    const detach = () => {
      body.removeListener('data', onData);
      body.removeListener('error', onError);
      body.removeListener('end', onEnd);
      if (body.listenerCount('error') === 0) body.on('error', ignoreLateError);
    };
    const onError = (err: unknown) => {
      detach();
      reject(err);
    };
    const onEnd = () => {
      detach();
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      chunks = [];
      resolve(finish(bytes));
    };
    body.on('data', onData);
    body.once('error', onError);
    body.once('end', onEnd);
  });
}

/**
 * The 'error' listener a settled reader or call leaves on its stream: an error after the end
 * changes nothing for the caller, and without a listener it would be thrown. Shared, so that it
 * keeps nothing alive.
 */
export function ignoreLateError(): void {}

/** Headers from `applyToFetchOptions` (a Headers object or a plain record) as a plain record. */
export function headersOf(h: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (h && typeof (h as { forEach?: unknown }).forEach === 'function') {
    (h as { forEach(cb: (v: string, k: string) => void): void }).forEach((v, k) => (out[k] = v));
  } else if (h && typeof h === 'object') {
    for (const [k, v] of Object.entries(h)) if (typeof v === 'string') out[k] = v;
  }
  return out;
}
