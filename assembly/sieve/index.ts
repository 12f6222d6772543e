// The JSON sieve: validates one JSON text in memory and writes the smaller JSON text that keeps
// only the members a keep spec names, each copied byte for byte (escapes and all), so that
// JSON.parse of the output yields exactly those members of JSON.parse of the input. Valid input
// is every text JSON.parse accepts (of the input's UTF-8 decoding); anything else is reported
// INVALID, never sieved. Pure over host-owned memory: the state below is reset by every call,
// and nothing is allocated.
import {
  DATA_BASE,
  E_CHILD,
  E_KEY,
  E_KEY_LEN,
  E_MODE,
  MAX_DEPTH,
  MODE_EACH,
  MODE_OBJECT,
  R_NON_ASCII,
  RESULT_ADDR,
  SIEVE_ABI_VERSION,
  SPEC_ENTRY_BYTES,
  STATUS_INVALID,
  STATUS_UNSUPPORTED,
} from './abi';

let pos: usize = 0;
let end: usize = 0;
let out: usize = 0;
let failed: u32 = 0;
let high: u32 = 0;
let depth: u32 = 0;
/** Just past the closing quote of the key memberKey() last read. */
let keyStop: usize = 0;

export function sieveAbiVersion(): u32 {
  return SIEVE_ABI_VERSION;
}

/** The lowest address the host may place input at (the spec area ends there). */
export function dataBase(): u32 {
  return DATA_BASE;
}

/**
 * Sieves [input, input + length) into output by the spec node at `root` (0: keep everything,
 * which validates and copies). Returns the output's length, or -STATUS_INVALID /
 * -STATUS_UNSUPPORTED. The output must have room for the input's length plus OUT_SLACK.
 */
export function sieve(root: u32, input: u32, length: u32, output: u32): i32 {
  pos = <usize>input;
  end = <usize>input + <usize>length;
  out = <usize>output;
  failed = 0;
  high = 0;
  depth = 0;
  skipWs();
  if (root != 0 && peek() == 0x7b) filterObject(<usize>root);
  else copyValue();
  skipWs();
  if (pos != end) fail(STATUS_INVALID);
  store<u32>(RESULT_ADDR + R_NON_ASCII, high >= 0x80 ? 1 : 0);
  return failed != 0 ? -(<i32>failed) : <i32>(out - <usize>output);
}

// A failure keeps the first status and moves to the end, so every loop above it stops.
function fail(status: u32): void {
  if (failed == 0) failed = status;
  pos = end;
}

@inline function peek(): u32 {
  return pos < end ? <u32>load<u8>(pos) : 0;
}

@inline function isDigit(c: u32): bool {
  return c - 0x30 < 10;
}

@inline function isHex(c: u32): bool {
  return c - 0x30 < 10 || (c | 0x20) - 0x61 < 6;
}

@inline function emit(c: u32): void {
  store<u8>(out, <u8>c);
  out++;
}

function skipWs(): void {
  while (pos < end) {
    const c = <u32>load<u8>(pos);
    if (c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09) return;
    pos++;
  }
}

/**
 * At a '"': moves past the closing quote. Returns true when the string holds an escape. The hot
 * loop of the sieve, so it works in locals (globals are memory to the engine) and takes runs of
 * plain bytes 16 at a time.
 */
function scanString(): bool {
  let p = pos + 1;
  const e = end;
  let escaped = false;
  let hi: u32 = 0;
  const quote = i8x16.splat(0x22);
  const backslash = i8x16.splat(0x5c);
  const space = i8x16.splat(0x20);
  for (;;) {
    while (p + 16 <= e) {
      const v = v128.load(p);
      const stop = v128.or(v128.or(i8x16.eq(v, quote), i8x16.eq(v, backslash)), i8x16.lt_u(v, space));
      const mask = i8x16.bitmask(stop);
      if (mask != 0) {
        const n = ctz(mask);
        hi |= i8x16.bitmask(v) & ((1 << n) - 1);
        p += n;
        break;
      }
      hi |= i8x16.bitmask(v);
      p += 16;
    }
    if (p >= e) break;
    const c = <u32>load<u8>(p);
    if (c == 0x22) {
      pos = p + 1;
      if (hi != 0) high = 0x80;
      return escaped;
    }
    if (c == 0x5c) {
      escaped = true;
      const x: u32 = p + 1 < e ? <u32>load<u8>(p + 1) : 0;
      if (x == 0x75) {
        if (p + 6 > e || !isHex(load<u8>(p + 2)) || !isHex(load<u8>(p + 3)) || !isHex(load<u8>(p + 4)) || !isHex(load<u8>(p + 5))) break;
        p += 6;
      } else if (x == 0x22 || x == 0x5c || x == 0x2f || x == 0x62 || x == 0x66 || x == 0x6e || x == 0x72 || x == 0x74) {
        p += 2;
      } else {
        break;
      }
      continue;
    }
    if (c < 0x20) break;
    hi |= c >> 7;
    p++;
  }
  fail(STATUS_INVALID);
  return escaped;
}

function digits(): void {
  if (!isDigit(peek())) {
    fail(STATUS_INVALID);
    return;
  }
  while (isDigit(peek())) pos++;
}

function scanNumber(): void {
  if (peek() == 0x2d) pos++;
  const c = peek();
  if (c == 0x30) pos++;
  else digits();
  if (peek() == 0x2e) {
    pos++;
    digits();
  }
  const e = peek();
  if (e == 0x65 || e == 0x45) {
    pos++;
    const s = peek();
    if (s == 0x2b || s == 0x2d) pos++;
    digits();
  }
}

/** At the first letter of `true`, `false` or `null` (packed little-endian in `word`, `n` bytes). */
function literal(word: u32, n: usize): void {
  if (pos + n > end) {
    fail(STATUS_INVALID);
    return;
  }
  const got = n == 4 ? load<u32>(pos) : load<u32>(pos + 1);
  if (n == 5 && load<u8>(pos) != 0x66) fail(STATUS_INVALID);
  else if (got != word) fail(STATUS_INVALID);
  else pos += n;
}

function skipValue(): void {
  const c = peek();
  if (c == 0x22) scanString();
  else if (c == 0x7b) skipObject();
  else if (c == 0x5b) skipArray();
  else if (c == 0x74) literal(0x65757274, 4); // true
  else if (c == 0x66) literal(0x65736c61, 5); // (f)alse
  else if (c == 0x6e) literal(0x6c6c756e, 4); // null
  else if (c == 0x2d || isDigit(c)) scanNumber();
  else fail(STATUS_INVALID);
}

function enter(): bool {
  if (++depth > MAX_DEPTH) {
    fail(STATUS_UNSUPPORTED);
    return false;
  }
  return true;
}

/** After a member or element: true at ',' (moved past it), false at `close` (moved past it). */
function next(close: u32): bool {
  skipWs();
  const c = peek();
  pos++;
  if (c == 0x2c) {
    skipWs();
    return true;
  }
  if (c != close) fail(STATUS_INVALID);
  return false;
}

/** At a '"' starting a member: moves past the key, the ':' and the whitespace after it. */
function memberKey(): bool {
  if (peek() != 0x22) {
    fail(STATUS_INVALID);
    return false;
  }
  const escaped = scanString();
  keyStop = pos;
  skipWs();
  if (peek() != 0x3a) fail(STATUS_INVALID);
  pos++;
  skipWs();
  return escaped;
}

function skipObject(): void {
  if (!enter()) return;
  pos++;
  skipWs();
  if (peek() == 0x7d) pos++;
  else
    do {
      memberKey();
      skipValue();
    } while (failed == 0 && next(0x7d));
  depth--;
}

function skipArray(): void {
  if (!enter()) return;
  pos++;
  skipWs();
  if (peek() == 0x5d) pos++;
  else
    do skipValue();
    while (failed == 0 && next(0x5d));
  depth--;
}

function copyValue(): void {
  const start = pos;
  skipValue();
  if (failed == 0) {
    memory.copy(out, start, pos - start);
    out += pos - start;
  }
}

/** The entry of `node` naming the key at [key, key + len), or 0. */
function entryFor(node: usize, key: usize, len: usize): usize {
  const count = load<u32>(node);
  let e = node + 4;
  for (let i: u32 = 0; i < count; i++, e += SPEC_ENTRY_BYTES) {
    if (<usize>load<u32>(e + E_KEY_LEN) != len) continue;
    const k = <usize>load<u32>(e + E_KEY);
    let j: usize = 0;
    while (j < len && load<u8>(k + j) == load<u8>(key + j)) j++;
    if (j == len) return e;
  }
  return 0;
}

function filterObject(node: usize): void {
  if (!enter()) return;
  pos++;
  emit(0x7b);
  skipWs();
  let first = true;
  if (peek() == 0x7d) pos++;
  else
    do {
      const key = pos;
      if (memberKey()) {
        // A key written with escapes may be one the spec names; leave it to JSON.parse.
        fail(STATUS_UNSUPPORTED);
        break;
      }
      const q = keyStop - 1; // the closing quote
      const e = failed == 0 ? entryFor(node, key + 1, q - key - 1) : 0;
      if (e == 0) {
        skipValue();
        continue;
      }
      if (!first) emit(0x2c);
      first = false;
      memory.copy(out, key, q + 1 - key);
      out += q + 1 - key;
      emit(0x3a);
      const mode = load<u32>(e + E_MODE);
      const c = peek();
      if (mode == MODE_OBJECT && c == 0x7b) filterObject(<usize>load<u32>(e + E_CHILD));
      else if (mode == MODE_EACH && c == 0x5b) filterArray(<usize>load<u32>(e + E_CHILD));
      else copyValue();
    } while (failed == 0 && next(0x7d));
  emit(0x7d);
  depth--;
}

function filterArray(node: usize): void {
  if (!enter()) return;
  pos++;
  emit(0x5b);
  skipWs();
  let first = true;
  if (peek() == 0x5d) pos++;
  else
    do {
      if (!first) emit(0x2c);
      first = false;
      if (peek() == 0x7b) filterObject(node);
      else copyValue();
    } while (failed == 0 && next(0x5d));
  emit(0x5d);
  depth--;
}
