/**
 * Raw single-object calls for the controller's hot path (VolumeAttachment create and delete,
 * the live Node read, the Node status merge patch), bypassing the generated client.
 *
 * Per call the generated client serialises the body through `ObjectSerializer`, parses MIME
 * types, runs its middleware observables and deserialises the response into class instances
 * we project and drop; at fleet scale that is a measurable share of the controller's CPU.
 * As for the paged lists (raw-request.ts), client-node still does kubeconfig, authentication
 * and TLS (`kc.applyToFetchOptions`, which hands over the shared keep-alive agent) and
 * node-fetch sends; we build the URL, body and headers, and parse a response once with
 * JSON.parse, or not at all when the caller ignores it.
 *
 * A response body is always read to its end, even when dropped: the keep-alive socket goes
 * back to the agent only then.
 */
import fetch from 'node-fetch';
import type { FleetKubeConfig } from './kube-config.js';
import { headersOf, httpError, readBody } from './raw-request.js';

export interface RawCall {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path from the server root, already escaped (see {@link pathSegment}). */
  path: string;
  /** Serialised request body; none when absent. */
  body?: string;
  /** Content-Type of `body` (default application/json). */
  contentType?: string;
  /** `json`: parse a 2xx body (resolved as `body`); `drain`: read and drop it (`body` undefined). */
  response: 'json' | 'drain';
  /** Aborts the request and the read of its body. */
  signal?: AbortSignal;
}

export interface RawResult {
  status: number;
  body: unknown;
}

/**
 * Sends one call. Rejects with {@link KubeHttpError} (status, Status reason and message,
 * Retry-After) on a non-2xx status, with node-fetch's error on a network failure or abort,
 * and with a SyntaxError when a 2xx `json` body does not parse.
 */
export async function sendRaw(kc: FleetKubeConfig, call: RawCall): Promise<RawResult> {
  const init = await kc.applyToFetchOptions({});
  const headers = headersOf(init.headers);
  headers.Accept = 'application/json';
  if (call.body !== undefined) {
    init.body = call.body;
    headers['Content-Type'] = call.contentType ?? 'application/json';
  }
  init.method = call.method;
  init.headers = headers;
  if (call.signal) init.signal = call.signal as typeof init.signal;
  const res = await fetch(kc.server() + call.path, init);
  const ok = res.status >= 200 && res.status <= 299;
  if (ok && call.response === 'drain') {
    await drain(res.body);
    return { status: res.status, body: undefined };
  }
  const text = await readBody(res.body, undefined);
  if (!ok) throw httpError(call.method, call.path, res.status, res.headers.get('retry-after'), text);
  return { status: res.status, body: JSON.parse(text) as unknown };
}

/** One path segment, escaped as the generated client escapes names. */
export function pathSegment(s: string): string {
  return encodeURIComponent(s);
}

/** Reads `body` to its end without keeping it. */
function drain(body: NodeJS.ReadableStream | null): Promise<void> {
  if (!body) return Promise.resolve();
  return new Promise((resolve, reject) => {
    body.once('error', reject);
    body.once('end', () => resolve());
    body.resume();
  });
}
