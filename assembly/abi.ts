// The ABI between the host (src/cache, src/kernel) and the plan kernel: where the tables live,
// how records are laid out, what the flag bits and action codes mean. Defined here once and
// mirrored in src/kernel/abi.ts; test/kernel/abi.test.ts checks that both agree.
//
// Every line of the form `export const NAME: u32 = <integer>;` is part of the ABI.

export const ABI_VERSION: u32 = 7;
export const ABI_MAGIC: u32 = 0x46415354;

// ---- header: table addresses and capacities, at a fixed address -----------------------------
// Address 0..63 is left unused so that a zero pointer is never a table.
export const HEADER_ADDR: u32 = 64;
export const HEADER_SIZE: u32 = 64;
export const H_MAGIC: u32 = 0;
export const H_PAIR_FLAGS: u32 = 4;
export const H_PAIR_RECORDS: u32 = 8;
export const H_NODE_FLAGS: u32 = 12;
export const H_VOLUME_WORDS: u32 = 16;
export const H_PAIR_CAPACITY: u32 = 20;
export const H_NODE_CAPACITY: u32 = 24;
export const H_VOLUME_CAPACITY: u32 = 28;
export const H_LAYOUT_GENERATION: u32 = 32;

// Table capacities are multiples of this, so SIMD scans never straddle a table end.
export const CAPACITY_ALIGN: u32 = 16;
export const NIL: u32 = 0xffffffff;

// ---- pairs: u16 flags (scanned), then one record per pair ---------------------------------
export const PF_LIVE: u32 = 1;
export const PF_DESIRED: u32 = 2;
export const PF_ATTACHED: u32 = 4;
export const PF_UNCERTAIN: u32 = 8;
export const PF_TIMER_SET: u32 = 16;
export const PF_MOUNTED: u32 = 32;
export const PF_REPORTED: u32 = 64;
export const PF_MAE_REPORTED: u32 = 128;
// an operation is pending on the key (volume, node)
export const PF_PENDING: u32 = 256;
// (volume, node, attach) / (volume, node, detach) is inside its backoff window
export const PF_BACKOFF_ATTACH: u32 = 512;
export const PF_BACKOFF_DETACH: u32 = 1024;
// host only: the pair is counted in the conflict set
export const PF_CONFLICT: u32 = 2048;
// host only: a backoff entry (inside its window or not) exists for a key of this pair
export const PF_BACKOFF_ENTRY: u32 = 4096;
// host only: the pair has more than one pod (the others are in a host-side list)
export const PF_MORE_PODS: u32 = 8192;
// host only: a volume-wide operation runs on this pair's node; the pair (and so its node) is
// kept until the operation completes, so that its outcome lands on the node it was sent for
export const PF_OP_HOLD: u32 = 16384;
// A pair needs the kernel's attention unless (flags & PF_SCAN_MASK) is 0 or PF_STEADY.
export const PF_SCAN_MASK: u32 = 30;
export const PF_STEADY: u32 = 6;

export const PAIR_RECORD_SIZE: u32 = 24;
export const PR_VOLUME: u32 = 0;
export const PR_NODE: u32 = 4;
// detach-request time, ms since the state's time base (valid while PF_TIMER_SET)
export const PR_TIMER: u32 = 8;
// host only: the pair's links in its volume's list (doubly linked, so a pair of a volume
// shared by many nodes is unlinked in O(1)) and in its node's list (singly linked: a node has
// few pairs); slot numbers, VW_HEAD_NIL = none
export const PR_NEXT_OF_VOLUME: u32 = 12;
export const PR_PREV_OF_VOLUME: u32 = 16;
export const PR_NEXT_OF_NODE: u32 = 20;

// ---- volumes: one u32 word each: the head of the volume's pair list in the low 24 bits
// (VW_HEAD_NIL = none) and the flags in the high byte (byte VW_FLAGS_BYTE, little-endian), so
// a volume costs 4 bytes and one cache line. Hence at most VW_HEAD_NIL - 1 pair slots.
export const VOLUME_WORD_SIZE: u32 = 4;
export const VW_HEAD_MASK: u32 = 0xffffff;
export const VW_HEAD_NIL: u32 = 0xffffff;
export const VW_FLAGS_BYTE: u32 = 3;
export const VF_LIVE: u32 = 1;
export const VF_FORBIDDEN: u32 = 2;
// some node holds a confirmed attachment (D7)
export const VF_ATTACHED_ANY: u32 = 4;
// an operation is pending on the volume-wide key
export const VF_WIDE_PENDING: u32 = 8;
// an operation is pending on some (volume, node) key of this volume (exact while VF_FORBIDDEN,
// which is the only time it is read; may be stale while multi-attach is allowed)
export const VF_PAIR_PENDING_ANY: u32 = 16;
export const VF_WIDE_BACKOFF_ATTACH: u32 = 32;
export const VF_WIDE_BACKOFF_DETACH: u32 = 64;
// host only: a backoff entry (inside its window or not) exists for the volume-wide key
export const VF_WIDE_BACKOFF_ENTRY: u32 = 128;

// ---- nodes: u8 flags -------------------------------------------------------------------------
export const NF_LIVE: u32 = 1;
export const NF_MANAGED: u32 = 2;
export const NF_HEALTHY: u32 = 4;
export const NF_OUT_OF_SERVICE: u32 = 8;
export const NF_STATUS_NEEDED: u32 = 16;
export const NF_IN_USE_OBSERVED: u32 = 32;
export const NF_REMOVED: u32 = 64;
// the node's report set was used at least once (B4 flags only tracked nodes)
export const NF_TRACKED: u32 = 128;

// ---- shard descriptor: one per shard, written by the host, cursors advanced by the kernel ----
export const DESC_SIZE: u32 = 80;
// A descriptor's address is a multiple of this (the kernel refuses others with
// STATUS_BAD_DESCRIPTOR): the host writes its fields through typed-array indices, which round
// a misaligned address down, so the kernel would read fields the host never wrote there.
export const DESC_ALIGN: u32 = 16;
export const D_PAIR_BEGIN: u32 = 0;
export const D_PAIR_END: u32 = 4;
export const D_NODE_BEGIN: u32 = 8;
export const D_NODE_END: u32 = 12;
export const D_PAIR_CURSOR: u32 = 16;
export const D_NODE_CURSOR: u32 = 20;
export const D_OUT: u32 = 24;
export const D_OUT_CAPACITY: u32 = 28;
export const D_OUT_LENGTH: u32 = 32;
// now, ms since the time base
export const D_NOW: u32 = 36;
export const D_OPTIONS: u32 = 40;
// max wait for unmount, ms, f64
export const D_MAX_WAIT: u32 = 48;
export const D_STATUS: u32 = 56;
// Attach window. A pass starts a bounded number of operations, so during a cold start with a
// million attaches outstanding the kernel need not list them all: it skips the first
// D_ATTACH_SKIP attach candidates of the shard, emits at most D_ATTACH_ROOM more, and counts
// every candidate it did not emit in D_ATTACH_OMITTED. Detaches, conflicts and status records
// are never windowed. The kernel decrements skip and room as it goes (resumable).
export const D_ATTACH_ROOM: u32 = 64;
export const D_ATTACH_SKIP: u32 = 68;
export const D_ATTACH_OMITTED: u32 = 72;

export const OPT_DISABLE_FORCE_DETACH: u32 = 1;

// ---- output: records of (volume, node, code) -------------------------------------------------
export const OUT_RECORD_SIZE: u32 = 12;
export const OUT_VOLUME: u32 = 0;
export const OUT_NODE: u32 = 4;
export const OUT_CODE: u32 = 8;

// code = action | detail flags
export const ACTION_MASK: u32 = 255;
export const ACTION_DETACH: u32 = 1;
export const ACTION_ATTACH: u32 = 2;
export const ACTION_CONFLICT: u32 = 3;
export const ACTION_STATUS: u32 = 4;
// F5: timer expired and force detach on timeout not disabled (forceDetachTimeoutExpired)
export const DF_FORCED_TIMEOUT: u32 = 256;
// F5: the node has the out-of-service taint
export const DF_OUT_OF_SERVICE: u32 = 512;
// F9: verifySafeToDetach
export const DF_VERIFY_SAFE: u32 = 1024;
// F4: this pass started the detach timer
export const DF_TIMER_STARTED: u32 = 2048;

// ---- kernel status codes ---------------------------------------------------------------------
export const STATUS_OK: u32 = 0;
export const STATUS_OUTPUT_FULL: u32 = 1;
export const STATUS_BAD_HEADER: u32 = 2;
export const STATUS_BAD_DESCRIPTOR: u32 = 3;
