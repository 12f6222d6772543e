/**
 * Request bodies: read with a size bound (kube-apiserver's 3 MiB) and parsed as JSON, with
 * malformed input answered 400 BadRequest and oversize 413.
 */
import type { IncomingMessage } from 'node:http';
import { ApiError, badRequest } from './status.js';

export const MAX_BODY_BYTES = 3 << 20;

/** The request body as text, at most `limit` bytes (413 beyond). */
export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<string> {
  return (await readBytes(req, limit)).toString('utf8');
}

/**
 * The request body, at most `limit` bytes: beyond, the rest is discarded and the answer is 413.
 * Settled, it takes its listeners off the request (a no-op stays for a late 'error'): Node 20
 * keeps a finished HTTP/2 stream, and the request on it, reachable until a full collection, and
 * the listeners would keep the chunks there too.
 */
export function readBytes(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    const detach = () => {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onError);
      if (req.listenerCount('error') === 0) req.on('error', ignoreLateError);
    };
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        detach();
        chunks = [];
        req.resume();
        reject(new ApiError(413, 'RequestEntityTooLarge', `the request body exceeds ${limit} bytes`));
        return;
      }
      chunks.push(c);
    };
    const onEnd = () => {
      detach();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      chunks = [];
    };
    const onError = (err: unknown) => {
      detach();
      reject(err);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** What a settled body read leaves on its request for an 'error' after the end: nothing to do. */
function ignoreLateError(): void {}

/** Parses a JSON body; malformed or empty input is a 400. */
export function parseJson(text: string): unknown {
  if (text.trim() === '') throw badRequest('the request body is empty');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
}

/** A JSON object body (not an array or scalar); anything else is a 400. */
export function parseObject(text: string): Record<string, unknown> {
  const v = parseJson(text);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw badRequest('the request body must be a JSON object');
  return v as Record<string, unknown>;
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0].trim().toLowerCase();
}
