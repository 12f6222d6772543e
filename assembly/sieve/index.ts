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
  STACK_ADDR,
  STATUS_INVALID,
  STATUS_UNSUPPORTED,
} from './abi';

let pos: usize = 0;
let end: usize = 0;
let out: usize = 0;
let failed: u32 = 0;
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
  depth = 0;
  skipWs();
  if (root != 0 && peek() == 0x7b) filterObject(<usize>root);
  else copyValue();
  skipWs();
  if (pos != end) fail(STATUS_INVALID);
  store<u32>(RESULT_ADDR + R_NON_ASCII, failed == 0 && !ascii(<usize>output, out) ? 1 : 0);
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

/** Whether [p, e) holds only bytes below 0x80 (what the host may then decode as Latin-1). */
function ascii(p: usize, e: usize): bool {
  let hi: i32 = 0;
  while (p + 16 <= e) {
    hi |= i8x16.bitmask(v128.load(p));
    p += 16;
  }
  while (p < e) hi |= <i32>load<u8>(p++) >> 7;
  return hi == 0;
}

function skipWs(): void {
  pos = ws(pos, end);
}

/** The first position at or after `p` that is not JSON whitespace. */
@inline function ws(p: usize, e: usize): usize {
  while (p < e) {
    const c = <u32>load<u8>(p);
    if (c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09) break;
    p++;
  }
  return p;
}

/**
 * At a '"': the position past the closing quote, or 0 when the string is not valid JSON (0 is
 * never a position: input starts at DATA_BASE). The hot loop of the sieve, so it works in locals
 * (globals are memory to the engine) and takes runs of plain bytes 16 at a time.
 */
function scanString(p: usize, e: usize): usize {
  p++;
  const quote = i8x16.splat(0x22);
  const backslash = i8x16.splat(0x5c);
  const space = i8x16.splat(0x20);
  for (;;) {
    while (p + 16 <= e) {
      const v = v128.load(p);
      const mask = i8x16.bitmask(v128.or(v128.or(i8x16.eq(v, quote), i8x16.eq(v, backslash)), i8x16.lt_u(v, space)));
      if (mask != 0) {
        p += ctz(mask);
        break;
      }
      p += 16;
    }
    if (p >= e) return 0;
    const c = <u32>load<u8>(p);
    if (c == 0x22) return p + 1;
    if (c == 0x5c) {
      const x: u32 = p + 1 < e ? <u32>load<u8>(p + 1) : 0;
      if (x == 0x75) {
        if (p + 6 > e || !isHex(load<u8>(p + 2)) || !isHex(load<u8>(p + 3)) || !isHex(load<u8>(p + 4)) || !isHex(load<u8>(p + 5))) return 0;
        p += 6;
      } else if (x == 0x22 || x == 0x5c || x == 0x2f || x == 0x62 || x == 0x66 || x == 0x6e || x == 0x72 || x == 0x74) {
        p += 2;
      } else {
        return 0;
      }
      continue;
    }
    if (c < 0x20) return 0;
    p++;
  }
  return 0; // not reached: the loop above only returns
}

/** At a digit or '-': the position past the number, or 0 when it is not a JSON number. */
function scanNumber(p: usize, e: usize): usize {
  if (load<u8>(p) == 0x2d) p++;
  if (p >= e) return 0;
  const c = <u32>load<u8>(p);
  if (c == 0x30) p++;
  else if (isDigit(c)) {
    p++;
    while (p < e && isDigit(load<u8>(p))) p++;
  } else return 0;
  if (p < e && load<u8>(p) == 0x2e) {
    p++;
    if (p >= e || !isDigit(load<u8>(p))) return 0;
    while (p < e && isDigit(load<u8>(p))) p++;
  }
  if (p < e && (<u32>load<u8>(p) | 0x20) == 0x65) {
    p++;
    if (p < e && (load<u8>(p) == 0x2b || load<u8>(p) == 0x2d)) p++;
    if (p >= e || !isDigit(load<u8>(p))) return 0;
    while (p < e && isDigit(load<u8>(p))) p++;
  }
  return p;
}

/** At a '"' starting a member: the position past the key, the ':' and the whitespace after it; 0 when invalid. */
function scanKey(p: usize, e: usize): usize {
  if (p >= e || load<u8>(p) != 0x22) return 0;
  p = scanString(p, e);
  if (p == 0) return 0;
  p = ws(p, e);
  if (p >= e || load<u8>(p) != 0x3a) return 0;
  return ws(p + 1, e);
}

/**
 * Moves past one value, validating it: iterative, in locals, with the closing bracket of each
 * open container on a byte stack at STACK_ADDR (nesting beyond MAX_DEPTH, counted with the
 * filtered levels above, is UNSUPPORTED).
 */
function skipValue(): void {
  let p = pos;
  const e = end;
  let d: usize = 0;
  const room = <usize>(MAX_DEPTH - depth);
  for (;;) {
    // One value at p.
    if (p >= e) break;
    const c = <u32>load<u8>(p);
    if (c == 0x22) {
      p = scanString(p, e);
    } else if (c == 0x7b || c == 0x5b) {
      if (d >= room) {
        fail(STATUS_UNSUPPORTED);
        return;
      }
      const close = c + 2; // '}' and ']'
      p = ws(p + 1, e);
      if (p < e && <u32>load<u8>(p) == close) {
        p++;
      } else {
        store<u8>(<usize>STACK_ADDR + d, <u8>close);
        d++;
        if (close == 0x7d) p = scanKey(p, e);
        if (p == 0) break;
        continue;
      }
    } else if (c == 0x74) {
      p = p + 4 <= e && load<u32>(p) == 0x65757274 ? p + 4 : 0; // true
    } else if (c == 0x66) {
      p = p + 5 <= e && load<u32>(p + 1) == 0x65736c61 ? p + 5 : 0; // (f)alse
    } else if (c == 0x6e) {
      p = p + 4 <= e && load<u32>(p) == 0x6c6c756e ? p + 4 : 0; // null
    } else if (c == 0x2d || isDigit(c)) {
      p = scanNumber(p, e);
    } else {
      break;
    }
    if (p == 0) break;
    // After a value: close what it ends, up to the next value or the end of this one.
    let more = false;
    while (d > 0) {
      p = ws(p, e);
      if (p >= e) break;
      const x = <u32>load<u8>(p);
      const close = <u32>load<u8>(<usize>STACK_ADDR + d - 1);
      if (x == 0x2c) {
        p = ws(p + 1, e);
        if (close == 0x7d) p = scanKey(p, e);
        more = true;
        break;
      }
      if (x != close) break;
      p++;
      d--;
    }
    if (d == 0) {
      pos = p;
      return;
    }
    if (!more || p == 0) break;
  }
  fail(STATUS_INVALID);
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

/** At a '"' starting a member: moves past the key, the ':' and the whitespace after it. Returns true when the key holds an escape. */
function memberKey(): bool {
  const key = pos;
  const e = end;
  const stop = key < e && load<u8>(key) == 0x22 ? scanString(key, e) : 0;
  const colon = stop == 0 ? e : ws(stop, e);
  if (colon >= e || load<u8>(colon) != 0x3a) {
    fail(STATUS_INVALID);
    return false;
  }
  keyStop = stop;
  pos = ws(colon + 1, e);
  for (let q = key + 1; q < stop - 1; q++) if (load<u8>(q) == 0x5c) return true;
  return false;
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
