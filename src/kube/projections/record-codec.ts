/**
 * How a projection is held in a packed store (kube/packed-store.ts): encoded into bytes by its
 * kind's {@link ProjectionCodec} and decoded again on each read. Strings unique to one object
 * (names, UIDs, volume handles) are written as UTF-8 bytes; strings many objects repeat
 * (namespaces, node names, phases, driver names, source types) as ids into {@link SHARED}; the
 * object's own name, which its store key holds already, as a reference to the key.
 *
 * Encoding is deterministic: equal projections encode to equal bytes, which is how the store
 * tells that an update changed nothing it keeps. A decoded projection is a transient copy.
 */
import { SharedStrings } from '../../packed/shared-strings.js';
import { writeUtf8 } from '../../packed/byte-arena.js';
import { isPackedKey, packedKeyText, packKey, PACKED_KEY_BYTES } from './store-key.js';

export interface ProjectionCodec<T> {
  encode(value: T, w: RecordWriter): void;
  /** A fresh object equal (deepStrictEqual) to the one encoded. */
  decode(r: RecordReader): T;
}

/** The process's table of repeated values, shared by every codec. */
export const SHARED = new SharedStrings();

type Utf8Slicer = { utf8Slice?: (start: number, end: number) => string };

/**
 * Appends to a growable scratch buffer; `bytes[0, pos)` is what was written. A record starts
 * with its store key ({@link key}), which {@link name} refers to instead of repeating it.
 */
export class RecordWriter {
  bytes = Buffer.allocUnsafeSlow(1024);
  pos = 0;
  private keyText = '';
  private keyNameAt = 0;

  reset(): void {
    this.pos = 0;
    this.keyText = '';
    this.keyNameAt = 0;
  }

  /** The store key (`namespace/name` or `name`) as the record's first bytes, with no length (store-key.ts). */
  key(key: string): void {
    this.keyText = key;
    this.keyNameAt = key.indexOf('/') + 1;
    this.room(PACKED_KEY_BYTES);
    const n = packKey(key, this.bytes, this.pos);
    if (n < 0) this.raw(key);
    else this.pos += n;
  }

  /**
   * The object's name: one byte (0) when it is the key's name part (after the first '/', or the
   * whole key), as it is for every object the store holds; else 1 and the name as {@link str}.
   */
  name(s: string): void {
    const k = this.keyText;
    if (s.length === k.length - this.keyNameAt && k.startsWith(s, this.keyNameAt)) {
      this.uint(0);
      return;
    }
    this.uint(1);
    this.str(s);
  }

  private room(n: number): void {
    if (this.pos + n <= this.bytes.length) return;
    const next = Buffer.allocUnsafeSlow(Math.max(this.bytes.length * 2, this.pos + n));
    this.bytes.copy(next, 0, 0, this.pos);
    this.bytes = next;
  }

  /** A string's UTF-8 bytes with no length (a store key, the record's part a). */
  raw(s: string): void {
    this.room(s.length * 3);
    this.pos += writeUtf8(this.bytes, s, this.pos, s.length * 3);
  }

  /** An unsigned integer below 2^32, LEB128. */
  uint(n: number): void {
    this.room(5);
    const b = this.bytes;
    while (n >= 0x80) {
      b[this.pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    b[this.pos++] = n;
  }

  /** A string unique to its object: its UTF-8 byte length, then the bytes. */
  str(s: string): void {
    const max = s.length * 3;
    if (max < 0x80) {
      // One length byte suffices: write the bytes after it, then the length.
      this.room(max + 1);
      const n = max === 0 ? 0 : writeUtf8(this.bytes, s, this.pos + 1, max);
      this.bytes[this.pos] = n;
      this.pos += n + 1;
      return;
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.uint(n);
    this.room(n);
    this.pos += writeUtf8(this.bytes, s, this.pos, n);
  }

  /**
   * A UID: 16 bytes after a 0 when it is a canonical lowercase UUID (what the API server
   * assigns), else 1 and the string as {@link str}.
   */
  uid(s: string): void {
    if (!isUuid(s)) {
      this.uint(1);
      this.str(s);
      return;
    }
    this.room(17);
    const b = this.bytes;
    b[this.pos++] = 0;
    for (let i = 0; i < 36; i += 2) {
      if (i === 8 || i === 13 || i === 18 || i === 23) i++;
      b[this.pos++] = (hexValue(s.charCodeAt(i)) << 4) | hexValue(s.charCodeAt(i + 1));
    }
  }

  /** A repeated value, by its id in {@link SHARED}. */
  shared(s: string): void {
    this.uint(SHARED.id(s));
  }

  float(n: number): void {
    this.room(8);
    this.bytes.writeDoubleLE(n, this.pos);
    this.pos += 8;
  }

  strList(list: readonly string[]): void {
    this.uint(list.length);
    for (const s of list) this.str(s);
  }

  /**
   * A unique volume name (`kubernetes.io/csi/<driver>^<handle>`): the part through the first `^`,
   * which every volume of a driver repeats, as a {@link shared} id, then the handle as {@link str}.
   * Any other name has the empty prefix (so the shared table grows with drivers, never with
   * volumes). Deterministic, as the codecs require.
   */
  volumeName(s: string): void {
    const cut = s.startsWith(CSI_UNIQUE_PREFIX) ? s.indexOf('^', CSI_UNIQUE_PREFIX.length) + 1 : 0;
    this.shared(cut === 0 ? '' : s.slice(0, cut));
    this.str(cut === 0 ? s : s.slice(cut));
  }

  volumeNameList(list: readonly string[]): void {
    this.uint(list.length);
    for (const s of list) this.volumeName(s);
  }
}

/**
 * Reads what a {@link RecordWriter} wrote: the key in `bytes[keyStart, keyStart + keyLen)`, the
 * body right after it, read from `pos`.
 */
export class RecordReader {
  bytes: Buffer = Buffer.alloc(0);
  pos = 0;
  private keyStart = 0;
  private keyEnd = 0;
  /** Where {@link volumeName} joins a prefix and a handle before decoding them as one string. */
  private scratch = Buffer.allocUnsafeSlow(256) as Utf8Buffer;
  /** Each shared prefix's UTF-8 bytes, by id. */
  private readonly prefixes: Buffer[] = [];

  /** Reads the record at `keyStart`; {@link release} drops the reference to `bytes` when done. */
  reset(bytes: Buffer, keyStart: number, keyLen: number): void {
    this.bytes = bytes;
    this.keyStart = keyStart;
    this.keyEnd = keyStart + keyLen;
    this.pos = this.keyEnd;
  }

  /** What {@link RecordWriter.name} wrote. */
  name(): string {
    if (this.uint() !== 0) return this.str();
    const b = this.bytes;
    if (isPackedKey(b, this.keyStart, this.keyEnd - this.keyStart)) return packedKeyText(b, this.keyStart);
    let at = this.keyStart;
    while (at < this.keyEnd && b[at] !== 0x2f) at++;
    const start = at < this.keyEnd ? at + 1 : this.keyStart;
    return this.slice(start, this.keyEnd);
  }

  private slice(start: number, end: number): string {
    if (start === end) return '';
    const b = this.bytes as unknown as Utf8Slicer;
    return b.utf8Slice ? b.utf8Slice(start, end) : this.bytes.toString('utf8', start, end);
  }

  release(): void {
    this.bytes = EMPTY;
  }

  uint(): number {
    const b = this.bytes;
    let n = 0;
    let shift = 0;
    for (;;) {
      const x = b[this.pos++] as number;
      n += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) return n;
      shift += 7;
    }
  }

  str(): string {
    const n = this.uint();
    if (n === 0) return '';
    const start = this.pos;
    this.pos += n;
    return this.slice(start, start + n);
  }

  shared(): string {
    return SHARED.at(this.uint());
  }

  /** What {@link RecordWriter.uid} wrote. */
  uid(): string {
    if (this.uint() !== 0) return this.str();
    const b = this.bytes;
    const out = UUID_SCRATCH;
    let o = 0;
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) out[o++] = 0x2d;
      const x = b[this.pos++] as number;
      out[o++] = HEX[x >> 4] as number;
      out[o++] = HEX[x & 15] as number;
    }
    return out.latin1Slice(0, 36);
  }

  float(): number {
    const n = this.bytes.readDoubleLE(this.pos);
    this.pos += 8;
    return n;
  }

  strList(): string[] {
    const n = this.uint();
    const out = new Array<string>(n);
    for (let i = 0; i < n; i++) out[i] = this.str();
    return out;
  }

  /** What {@link RecordWriter.volumeName} wrote, as one flat string (not a prefix + handle rope). */
  volumeName(): string {
    const prefix = this.prefixBytes(this.uint());
    const n = this.uint();
    const total = prefix.length + n;
    if (total > this.scratch.length) this.scratch = Buffer.allocUnsafeSlow(Math.max(total, this.scratch.length * 2)) as Utf8Buffer;
    prefix.copy(this.scratch, 0);
    this.bytes.copy(this.scratch, prefix.length, this.pos, this.pos + n);
    this.pos += n;
    return total === 0 ? '' : this.scratch.utf8Slice(0, total);
  }

  volumeNameList(): string[] {
    const n = this.uint();
    const out = new Array<string>(n);
    for (let i = 0; i < n; i++) out[i] = this.volumeName();
    return out;
  }

  /** A shared prefix's UTF-8 bytes, kept per id (there are as many as drivers). */
  private prefixBytes(id: number): Buffer {
    let b = this.prefixes[id];
    if (b === undefined) this.prefixes[id] = b = Buffer.from(SHARED.at(id), 'utf8');
    return b;
  }
}

type Utf8Buffer = Buffer & { utf8Slice(start: number, end: number): string };

const EMPTY = Buffer.alloc(0);
const CSI_UNIQUE_PREFIX = 'kubernetes.io/csi/';
const HEX = Buffer.from('0123456789abcdef', 'latin1');
/** A decoded UUID's text, made into a flat string by one latin1Slice. */
const UUID_SCRATCH = Buffer.alloc(36) as Buffer & { latin1Slice(start: number, end: number): string };

function hexValue(c: number): number {
  return c <= 0x39 ? c - 0x30 : c - 0x57;
}

/** `8-4-4-4-12` lowercase hex digits. */
function isUuid(s: string): boolean {
  if (s.length !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = s.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d) return false;
    } else if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}
