/**
 * Writes a list response (`{"kind":…,"metadata":{…},"items":[…]}`) from the stored JSON of its
 * items. The bytes are encoded straight into reused buffers: no page-sized string and no
 * per-chunk Buffer is built per request, so a paged LIST allocates next to nothing on the JS
 * heap or as external memory (both would have the GC walk a heap of a million stored objects,
 * and a list page is otherwise little more than a copy and the TLS encryption).
 *
 * A list up to {@link SINGLE_WRITE_BYTES} goes out in one write with a Content-Length (every
 * `limit`ed page); a larger one (an unlimited list of a big collection) streams chunked in
 * buffers of about {@link STREAM_CHUNK_BYTES}, each write waiting for the socket to drain, so a
 * list of every object never sits in memory twice. The bytes are identical either way.
 */
import type { ServerResponse } from 'node:http';
import type { BytePage } from '../store/servable-store.js';
import type { ResourceInfo } from '../store/resources.js';
import { responseGone } from './http-listener.js';

/** Lists up to this many bytes are sent in one write with a Content-Length. */
export const SINGLE_WRITE_BYTES = 4 << 20;
const STREAM_CHUNK_BYTES = 1 << 20;
/** A chunk's buffer: room for the item that crosses STREAM_CHUNK_BYTES. */
const CHUNK_BUFFER_BYTES = STREAM_CHUNK_BYTES + (64 << 10);
/** Free buffers kept for reuse (a paged list has one or two pages in flight per client). */
const POOL_SIZE = 4;
/** UTF-8 takes at most 3 bytes per UTF-16 code unit. */
const MAX_UTF8_PER_UNIT = 3;
const COMMA = 0x2c;

/** Reused output buffers, handed back once the socket has taken their bytes. */
export class BufferPool {
  private readonly free: Buffer[] = [];

  /** A buffer of at least `bytes` (its contents are garbage). */
  take(bytes: number): Buffer {
    for (let i = 0; i < this.free.length; i++) {
      if (this.free[i].length >= bytes) return this.free.splice(i, 1)[0];
    }
    // Rounded up so that pages of varying size reuse the same buffers.
    return Buffer.allocUnsafeSlow(Math.max(64 << 10, 2 ** Math.ceil(Math.log2(bytes))));
  }

  give(buf: Buffer): void {
    if (this.free.length < POOL_SIZE) this.free.push(buf);
  }
}

const sharedPool = new BufferPool();

export interface ListMeta {
  resourceVersion: number;
  continueToken?: string;
}

/** The list's opening bytes up to `"items":[`, metadata before items as kube-apiserver writes them. */
function listHead(info: ResourceInfo, meta: ListMeta): string {
  const cont = meta.continueToken ? `,"continue":"${meta.continueToken}"` : '';
  return `{"kind":"${info.listKind}","apiVersion":"${info.apiVersion}","metadata":{"resourceVersion":"${meta.resourceVersion}"${cont}},"items":[`;
}

/**
 * UTF-8 into a pooled buffer that grows when needed: only near its end is an item's exact
 * length measured (at most 3 bytes per UTF-16 code unit decides when that is necessary).
 */
export class Encoder {
  buf: Buffer;
  at = 0;

  constructor(bytes: number, private readonly pool: BufferPool = sharedPool) {
    this.buf = this.pool.take(bytes);
  }

  put(s: string): void {
    if (this.at + s.length * MAX_UTF8_PER_UNIT > this.buf.length) {
      const need = this.at + Buffer.byteLength(s);
      if (need > this.buf.length) {
        const bigger = this.pool.take(need);
        this.buf.copy(bigger, 0, 0, this.at);
        this.pool.give(this.buf);
        this.buf = bigger;
      }
    }
    this.at += this.buf.write(s, this.at);
  }

  comma(): void {
    if (this.at === this.buf.length) this.put(',');
    else this.buf[this.at++] = COMMA;
  }

  /**
   * Hands the bytes so far to `write`, which calls back once the socket has consumed them (the
   * buffer then returns to the pool; a write that never completes leaves it to the GC).
   * The encoder must not be used afterwards.
   */
  finish(write: (bytes: Buffer, done: () => void) => void): void {
    const out = this.buf;
    write(out.subarray(0, this.at), () => this.pool.give(out));
  }

  /** `finish`, then carries on in a fresh buffer of `bytes`. */
  flush(write: (bytes: Buffer, done: () => void) => void, bytes: number): void {
    this.finish(write);
    this.buf = this.pool.take(bytes);
    this.at = 0;
  }

  /** Gives the buffer back unsent. */
  drop(): void {
    this.pool.give(this.buf);
  }
}

/** Sends the list; resolves once its last byte is handed to the response (or the client went away). */
export async function writeList(res: ServerResponse, info: ResourceInfo, meta: ListMeta, items: readonly string[]): Promise<void> {
  const head = listHead(info, meta);
  // Code units, which are the bytes of ASCII JSON: the usual size, and the size that decides streaming.
  let units = head.length + items.length + 2; // commas and the closing "]}"
  for (const json of items) units += json.length;
  if (units > SINGLE_WRITE_BYTES) return streamList(res, head, items);
  const enc = new Encoder(units);
  enc.put(head);
  for (let i = 0; i < items.length; i++) {
    if (i > 0) enc.comma();
    enc.put(items[i]);
  }
  enc.put(']}');
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': enc.at });
  enc.finish((bytes, done) => res.end(bytes, done));
}

/**
 * Sends a list whose items the store copies as bytes (a page that fits one write); a larger
 * one is streamed from the items' strings.
 */
export async function writeListBytes(res: ServerResponse, info: ResourceInfo, meta: ListMeta, page: BytePage): Promise<void> {
  const head = listHead(info, meta);
  const size = Buffer.byteLength(head) + page.bytes + page.count + 2;
  if (size > SINGLE_WRITE_BYTES) return streamList(res, head, page.strings());
  const enc = new Encoder(size);
  enc.put(head);
  enc.at = page.copyItems(enc.buf, enc.at);
  enc.put(']}');
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': enc.at });
  enc.finish((bytes, done) => res.end(bytes, done));
}

/** A large list in chunks of about STREAM_CHUNK_BYTES (chunked on HTTP/1.1, DATA frames on HTTP/2). */
async function streamList(res: ServerResponse, head: string, items: readonly string[]): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  const enc = new Encoder(CHUNK_BUFFER_BYTES);
  let drained = true;
  const write = (bytes: Buffer, done: () => void) => {
    drained = res.write(bytes, done);
  };
  enc.put(head);
  for (let i = 0; i < items.length && !responseGone(res); i++) {
    if (i > 0) enc.comma();
    enc.put(items[i]);
    if (enc.at >= STREAM_CHUNK_BYTES) {
      enc.flush(write, CHUNK_BUFFER_BYTES);
      if (!drained) await drainOrClose(res);
    }
  }
  if (responseGone(res)) return enc.drop();
  enc.put(']}');
  enc.finish((bytes, done) => res.end(bytes, done));
}

function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
