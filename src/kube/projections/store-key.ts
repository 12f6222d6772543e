/**
 * A store key as a packed record holds it (its part a): the key's UTF-8 bytes, or, for a key of
 * the form `csi-<64 lowercase hex digits>` (the name every CSI VolumeAttachment is given, the
 * SHA-256 of its handle, driver and node), a 0 byte and the digest's 32 bytes: the name is
 * derived from those bytes, not stored as text. No Kubernetes name holds a NUL, so a key is held
 * one way only and the two forms never compare equal.
 */
const PREFIX = 'csi-';
const HEX_DIGITS = 64;
/** Bytes of a packed key: the 0 tag and the digest. */
export const PACKED_KEY_BYTES = 1 + HEX_DIGITS / 2;

/** Writes `key` packed at `out[at]` and returns the bytes written, or -1 when it does not pack. */
export function packKey(key: string, out: Buffer, at: number): number {
  if (key.length !== PREFIX.length + HEX_DIGITS || !key.startsWith(PREFIX)) return -1;
  for (let i = PREFIX.length; i < key.length; i++) if (hexValue(key.charCodeAt(i)) < 0) return -1;
  out[at] = 0;
  for (let i = 0, j = PREFIX.length; i < HEX_DIGITS / 2; i++, j += 2) out[at + 1 + i] = (hexValue(key.charCodeAt(j)) << 4) | hexValue(key.charCodeAt(j + 1));
  return PACKED_KEY_BYTES;
}

/** Whether `bytes[start, start + len)` is a packed key. */
export function isPackedKey(bytes: Uint8Array, start: number, len: number): boolean {
  return len === PACKED_KEY_BYTES && bytes[start] === 0;
}

/** The text of a packed key (see {@link isPackedKey}). */
export function packedKeyText(bytes: Uint8Array, start: number): string {
  const out = TEXT;
  for (let i = 0; i < HEX_DIGITS / 2; i++) {
    const x = bytes[start + 1 + i];
    out[PREFIX.length + 2 * i] = HEX[x >> 4];
    out[PREFIX.length + 2 * i + 1] = HEX[x & 15];
  }
  return out.latin1Slice(0, out.length);
}

function hexValue(c: number): number {
  return c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
}

const HEX = Buffer.from('0123456789abcdef', 'latin1');
/** A decoded key's text, made into a flat string by one latin1Slice. */
const TEXT = Buffer.from(PREFIX + '0'.repeat(HEX_DIGITS), 'latin1') as Buffer & { latin1Slice(start: number, end: number): string };
