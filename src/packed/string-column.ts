/**
 * StringColumn: one optional string per integer slot (a pod UID per pair, a device path per
 * volume), without a JavaScript string per slot. A canonical UUID (8-4-4-4-12 lowercase hex, what Kubernetes
 * issues) is packed into 16 bytes of a typed array; any other string is kept as UTF-8 bytes in
 * a ByteArena. The mapping from a string to its form is fixed, so two equal strings always
 * compare in the same form. `get` decodes a fresh string, which dies young.
 */
import { ByteArena } from './byte-arena.js';

const NONE = 0;
const UUID = 1;
const TEXT = 2;

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

export class StringColumn {
  private kind = new Uint8Array(64);
  private uuids = new Uint8Array(64 * 16);
  private readonly texts = new ByteArena();
  private count = 0;

  /** Number of slots holding a string. */
  get size(): number {
    return this.count;
  }

  /** Bytes held: the packed UUIDs and the text kept in the arena. */
  get bytes(): number {
    return this.uuids.length + this.kind.length + this.texts.bytes;
  }

  has(slot: number): boolean {
    return this.kind[slot] > NONE;
  }

  set(slot: number, s: string): void {
    this.clear(slot);
    if (slot >= this.kind.length) this.grow(slot);
    if (packUuid(s, this.uuids, slot * 16)) {
      this.kind[slot] = UUID;
    } else {
      while (this.texts.slotLimit <= slot) this.texts.newSlot();
      this.texts.set(slot, s, '');
      this.kind[slot] = TEXT;
    }
    this.count++;
  }

  clear(slot: number): void {
    const k = this.kind[slot];
    if (k === NONE || k === undefined) return;
    if (k === TEXT) this.texts.clear(slot);
    this.kind[slot] = NONE;
    this.count--;
  }

  /** Whether the slot holds `s`. */
  equals(slot: number, s: string): boolean {
    const k = this.kind[slot];
    if (k === UUID) return uuidEquals(s, this.uuids, slot * 16);
    if (k === TEXT) return this.texts.text(slot, 0) === s;
    return false;
  }

  /** The slot's string (a new one), or undefined. */
  get(slot: number): string | undefined {
    const k = this.kind[slot];
    if (k === UUID) return unpackUuid(this.uuids, slot * 16);
    if (k === TEXT) return this.texts.text(slot, 0);
    return undefined;
  }

  private grow(slot: number): void {
    const n = Math.max(slot + 1, this.kind.length * 2);
    const kind = new Uint8Array(n);
    kind.set(this.kind);
    this.kind = kind;
    const uuids = new Uint8Array(n * 16);
    uuids.set(this.uuids);
    this.uuids = uuids;
  }
}

/** Hex digit values by char code: lowercase only (uppercase is not canonical, it is kept as text); -1 otherwise. */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let c = 0; c < 10; c++) HEX_VALUE[48 + c] = c;
for (let c = 0; c < 6; c++) HEX_VALUE[97 + c] = 10 + c;

/** Byte j of a UUID is at chars DIGIT[j], DIGIT[j] + 1 (the dashes skipped). */
const DIGIT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

function isUuidShape(s: string): boolean {
  return s.length === 36 && s.charCodeAt(8) === 45 && s.charCodeAt(13) === 45 && s.charCodeAt(18) === 45 && s.charCodeAt(23) === 45;
}

/** The byte at DIGIT[j] of `s`, or -1 when those two chars are not lowercase hex. */
function byteAt(s: string, j: number): number {
  const i = DIGIT[j];
  const a = s.charCodeAt(i);
  const b = s.charCodeAt(i + 1);
  const hi = a < 128 ? HEX_VALUE[a] : -1;
  const lo = b < 128 ? HEX_VALUE[b] : -1;
  return hi < 0 || lo < 0 ? -1 : (hi << 4) | lo;
}

/** Packs a canonical lowercase UUID into `out[at, at + 16)`; false (out partly written) for any other string. */
function packUuid(s: string, out: Uint8Array, at: number): boolean {
  if (!isUuidShape(s)) return false;
  for (let j = 0; j < 16; j++) {
    const v = byteAt(s, j);
    if (v < 0) return false;
    out[at + j] = v;
  }
  return true;
}

/** Whether `s` is the canonical UUID packed at `u[at, at + 16)` (stops at the first differing byte). */
function uuidEquals(s: string, u: Uint8Array, at: number): boolean {
  if (!isUuidShape(s)) return false;
  for (let j = 0; j < 16; j++) if (byteAt(s, j) !== u[at + j]) return false;
  return true;
}

function unpackUuid(u: Uint8Array, at: number): string {
  const h = (i: number) => HEX[u[at + i]];
  return `${h(0)}${h(1)}${h(2)}${h(3)}-${h(4)}${h(5)}-${h(6)}${h(7)}-${h(8)}${h(9)}-${h(10)}${h(11)}${h(12)}${h(13)}${h(14)}${h(15)}`;
}
