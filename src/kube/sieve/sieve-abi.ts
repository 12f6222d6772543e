/**
 * The JSON sieve's ABI, mirrored from assembly/sieve/abi.ts (the definition; comments there).
 * test/kube/sieve-abi.test.ts checks that every constant agrees.
 */
export const SIEVE_ABI_VERSION = 2;
export const RESULT_ADDR = 64;
export const R_NON_ASCII = 0;
export const STACK_ADDR = 512;
export const SPEC_BASE = 1024;
export const SPEC_BYTES = 64512;
export const DATA_BASE = 65536;
export const OUT_SLACK = 4096;
export const MAX_DEPTH = 512;
export const SPEC_ENTRY_BYTES = 16;
export const E_KEY = 0;
export const E_KEY_LEN = 4;
export const E_MODE = 8;
export const E_CHILD = 12;
export const MODE_WHOLE = 1;
export const MODE_OBJECT = 2;
export const MODE_EACH = 3;
export const STATUS_INVALID = 1;
export const STATUS_UNSUPPORTED = 2;
