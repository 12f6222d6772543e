/**
 * The bucket of a node: a fixed, well-mixed 64-bit hash of the node name's UTF-8 bytes,
 * reduced to [0, buckets).
 *
 * Contract:
 * - `bucketOf(name, buckets)` depends on nothing but its arguments, on every replica and every
 *   release: a node never changes bucket while the bucket count stays the same, so ownership moves
 *   only when a bucket's owner changes.
 * - The hash is FNV-1a 64 over the UTF-8 encoding (lone surrogates encoded as U+FFFD, as
 *   TextEncoder does), then murmur3's fmix64 finaliser. Raw FNV-1a leaves short sequential names
 *   (`node-0`, `node-1`, …) in clusters; the finaliser makes every output bit depend on every
 *   input bit, so buckets are uniform for any naming scheme.
 * - The arithmetic is on unsigned 32-bit halves (no BigInt) and allocation-free: it runs before
 *   every API write the controller makes.
 *
 * `hash53` and `mix53` expose the same hash (top 53 bits, an exact JS number) for rendezvous
 * weights.
 */

export const DEFAULT_BUCKETS = 1024;

const TWO32 = 4294967296;

// The 64-bit result of the last fnv1a64 / fmix64 call, as unsigned 32-bit halves (module state,
// so that no call allocates).
let hi = 0;
let lo = 0;

/** High 32 bits of the unsigned 64-bit product of two unsigned 32-bit values. */
function mulHi32(a: number, b: number): number {
  const a0 = a & 0xffff;
  const a1 = a >>> 16;
  const b0 = b & 0xffff;
  const b1 = b >>> 16;
  const t = a1 * b0 + ((a0 * b0) >>> 16);
  const w = (t & 0xffff) + a0 * b1;
  return (a1 * b1 + Math.floor(t / 65536) + Math.floor(w / 65536)) >>> 0;
}

/** (hi, lo) ← (hi, lo) × (mh, ml) mod 2^64. */
function mul64(mh: number, ml: number): void {
  const h = (mulHi32(lo, ml) + Math.imul(hi, ml) + Math.imul(lo, mh)) >>> 0;
  lo = Math.imul(lo, ml) >>> 0;
  hi = h;
}

/** One FNV-1a step: xor the byte in, multiply by the FNV prime 0x100000001b3. */
function fnvByte(byte: number): void {
  lo = (lo ^ byte) >>> 0;
  const p = lo * 0x1b3; // < 2^41: exact
  hi = (Math.imul(hi, 0x1b3) + ((lo << 8) >>> 0) + Math.floor(p / TWO32)) >>> 0;
  lo = p >>> 0;
}

/** (hi, lo) ← FNV-1a 64 of the UTF-8 bytes of `s`. */
function fnv1a64(s: string): void {
  hi = 0xcbf29ce4;
  lo = 0x84222325;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      fnvByte(c);
      continue;
    }
    if (c < 0x800) {
      fnvByte(0xc0 | (c >>> 6));
      fnvByte(0x80 | (c & 0x3f));
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
        fnvByte(0xf0 | (cp >>> 18));
        fnvByte(0x80 | ((cp >>> 12) & 0x3f));
        fnvByte(0x80 | ((cp >>> 6) & 0x3f));
        fnvByte(0x80 | (cp & 0x3f));
        continue;
      }
      c = 0xfffd;
    }
    fnvByte(0xe0 | (c >>> 12));
    fnvByte(0x80 | ((c >>> 6) & 0x3f));
    fnvByte(0x80 | (c & 0x3f));
  }
}

/** (hi, lo) ← murmur3 fmix64(hi, lo). */
function fmix64(): void {
  lo = (lo ^ (hi >>> 1)) >>> 0; // k ^= k >>> 33
  mul64(0xff51afd7, 0xed558ccd);
  lo = (lo ^ (hi >>> 1)) >>> 0;
  mul64(0xc4ceb9fe, 0x1a85ec53);
  lo = (lo ^ (hi >>> 1)) >>> 0;
}

/** The top 53 bits of (hi, lo), an exact non-negative integer. */
function top53(): number {
  return hi * 2097152 + (lo >>> 11);
}

/** The bucket of `name` in [0, buckets). */
export function bucketOf(name: string, buckets: number = DEFAULT_BUCKETS): number {
  fnv1a64(name);
  fmix64();
  // (hi·2^32 + lo) mod buckets, exact while buckets < 2^21.
  return ((hi % buckets) * (TWO32 % buckets) + (lo % buckets)) % buckets;
}

/** fmix64(FNV-1a 64(UTF-8 of `s`)), top 53 bits. */
export function hash53(s: string): number {
  fnv1a64(s);
  fmix64();
  return top53();
}

/** fmix64 of the 64-bit value (h32, l32) (unsigned 32-bit halves), top 53 bits. */
export function mix53(h32: number, l32: number): number {
  hi = h32 >>> 0;
  lo = l32 >>> 0;
  fmix64();
  return top53();
}

/** The full 64-bit hash of `s` as a BigInt (tests and diagnostics; allocates). */
export function hash64(s: string): bigint {
  fnv1a64(s);
  fmix64();
  return (BigInt(hi) << 32n) | BigInt(lo);
}
