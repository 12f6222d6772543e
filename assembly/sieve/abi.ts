// The ABI between the host (src/kube/sieve) and the JSON sieve: where the keep specs, the input
// and the output live in the sieve's own memory, how a spec is laid out, and what the modes and
// statuses mean. Defined here once and mirrored in src/kube/sieve/sieve-abi.ts;
// test/kube/sieve-abi.test.ts checks that both agree.
//
// Every line of the form `export const NAME: u32 = <integer>;` is part of the ABI.

export const SIEVE_ABI_VERSION: u32 = 2;

// ---- memory: one instance per thread, memory owned by the host and not shared ---------------
// [0, RESULT_ADDR) is left unused so that a zero offset is never a spec node.
export const RESULT_ADDR: u32 = 64;
// u32 at RESULT_ADDR + R_NON_ASCII: 1 when a byte >= 0x80 appears in the output.
export const R_NON_ASCII: u32 = 0;
// The skipper's stack: one byte per open container (its closing bracket), MAX_DEPTH of them.
export const STACK_ADDR: u32 = 512;
export const SPEC_BASE: u32 = 1024;
export const SPEC_BYTES: u32 = 64512;
// The input is copied to DATA_BASE; the output goes after it (the host places it).
export const DATA_BASE: u32 = 65536;
// The output never exceeds the input's length by more than this (closing brackets written while
// a failure unwinds).
export const OUT_SLACK: u32 = 4096;
// Objects and arrays nested deeper than this are left to JSON.parse (status UNSUPPORTED).
export const MAX_DEPTH: u32 = 512;

// ---- a spec node: u32 count, then count entries of SPEC_ENTRY_BYTES -------------------------
// entry: u32 key offset (bytes in the spec area), u32 key length, u32 mode, u32 child node.
export const SPEC_ENTRY_BYTES: u32 = 16;
export const E_KEY: u32 = 0;
export const E_KEY_LEN: u32 = 4;
export const E_MODE: u32 = 8;
export const E_CHILD: u32 = 12;
// The member's value is copied as it is.
export const MODE_WHOLE: u32 = 1;
// An object value keeps only the members its child node names; any other value is copied.
export const MODE_OBJECT: u32 = 2;
// An array value keeps, of each element that is an object, the members its child node names;
// other elements, and a value that is not an array, are copied.
export const MODE_EACH: u32 = 3;

// ---- statuses: sieve() returns the output length, or the negated status ---------------------
// The input is not JSON (JSON.parse would throw on it).
export const STATUS_INVALID: u32 = 1;
// Valid, but not sieved: a key written with escapes where the spec names keys, or nesting
// beyond MAX_DEPTH. The host parses the whole input instead.
export const STATUS_UNSUPPORTED: u32 = 2;
