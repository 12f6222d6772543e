/**
 * Host mirror of assembly/abi.ts: table layout, flag bits, action codes and status codes shared
 * with the plan kernel. Keep in step with assembly/abi.ts (test/kernel/abi.test.ts compares
 * every constant by name and value, and the compiled module's abiVersion()).
 */
export const ABI_VERSION = 7;
export const ABI_MAGIC = 0x46415354;
// ---- header: table addresses and capacities, at a fixed address -----------------------------
export const HEADER_ADDR = 64;
export const HEADER_SIZE = 64;
export const H_MAGIC = 0;
export const H_PAIR_FLAGS = 4;
export const H_PAIR_RECORDS = 8;
export const H_NODE_FLAGS = 12;
export const H_VOLUME_WORDS = 16;
export const H_PAIR_CAPACITY = 20;
export const H_NODE_CAPACITY = 24;
export const H_VOLUME_CAPACITY = 28;
export const H_LAYOUT_GENERATION = 32;
export const CAPACITY_ALIGN = 16;
export const NIL = 0xffffffff;
// ---- pairs: u16 flags (scanned), then one record per pair ---------------------------------
export const PF_LIVE = 1;
export const PF_DESIRED = 2;
export const PF_ATTACHED = 4;
export const PF_UNCERTAIN = 8;
export const PF_TIMER_SET = 16;
export const PF_MOUNTED = 32;
export const PF_REPORTED = 64;
export const PF_MAE_REPORTED = 128;
export const PF_PENDING = 256;
export const PF_BACKOFF_ATTACH = 512;
export const PF_BACKOFF_DETACH = 1024;
export const PF_CONFLICT = 2048;
export const PF_BACKOFF_ENTRY = 4096;
export const PF_MORE_PODS = 8192;
export const PF_OP_HOLD = 16384;
export const PF_SCAN_MASK = 30;
export const PF_STEADY = 6;
export const PAIR_RECORD_SIZE = 24;
export const PR_VOLUME = 0;
export const PR_NODE = 4;
export const PR_TIMER = 8;
export const PR_NEXT_OF_VOLUME = 12;
export const PR_PREV_OF_VOLUME = 16;
export const PR_NEXT_OF_NODE = 20;
// ---- volumes: one u32 word each: the head of the volume's pair list in the low 24 bits
export const VOLUME_WORD_SIZE = 4;
export const VW_HEAD_MASK = 0xffffff;
export const VW_HEAD_NIL = 0xffffff;
export const VW_FLAGS_BYTE = 3;
export const VF_LIVE = 1;
export const VF_FORBIDDEN = 2;
export const VF_ATTACHED_ANY = 4;
export const VF_WIDE_PENDING = 8;
export const VF_PAIR_PENDING_ANY = 16;
export const VF_WIDE_BACKOFF_ATTACH = 32;
export const VF_WIDE_BACKOFF_DETACH = 64;
export const VF_WIDE_BACKOFF_ENTRY = 128;
// ---- nodes: u8 flags -------------------------------------------------------------------------
export const NF_LIVE = 1;
export const NF_MANAGED = 2;
export const NF_HEALTHY = 4;
export const NF_OUT_OF_SERVICE = 8;
export const NF_STATUS_NEEDED = 16;
export const NF_IN_USE_OBSERVED = 32;
export const NF_REMOVED = 64;
export const NF_TRACKED = 128;
// ---- shard descriptor: one per shard, written by the host, cursors advanced by the kernel ----
export const DESC_SIZE = 80;
export const DESC_ALIGN = 16;
export const D_PAIR_BEGIN = 0;
export const D_PAIR_END = 4;
export const D_NODE_BEGIN = 8;
export const D_NODE_END = 12;
export const D_PAIR_CURSOR = 16;
export const D_NODE_CURSOR = 20;
export const D_OUT = 24;
export const D_OUT_CAPACITY = 28;
export const D_OUT_LENGTH = 32;
export const D_NOW = 36;
export const D_OPTIONS = 40;
export const D_MAX_WAIT = 48;
export const D_STATUS = 56;
export const D_ATTACH_ROOM = 64;
export const D_ATTACH_SKIP = 68;
export const D_ATTACH_OMITTED = 72;
export const OPT_DISABLE_FORCE_DETACH = 1;
// ---- output: records of (volume, node, code) -------------------------------------------------
export const OUT_RECORD_SIZE = 12;
export const OUT_VOLUME = 0;
export const OUT_NODE = 4;
export const OUT_CODE = 8;
export const ACTION_MASK = 255;
export const ACTION_DETACH = 1;
export const ACTION_ATTACH = 2;
export const ACTION_CONFLICT = 3;
export const ACTION_STATUS = 4;
export const DF_FORCED_TIMEOUT = 256;
export const DF_OUT_OF_SERVICE = 512;
export const DF_VERIFY_SAFE = 1024;
export const DF_TIMER_STARTED = 2048;
// ---- kernel status codes ---------------------------------------------------------------------
export const STATUS_OK = 0;
export const STATUS_OUTPUT_FULL = 1;
export const STATUS_BAD_HEADER = 2;
export const STATUS_BAD_DESCRIPTOR = 3;

/** Pages (64 KiB) of the shared memory: must equal asconfig.json's initialMemory/maximumMemory. */
export const MEMORY_INITIAL_PAGES = 16;
export const MEMORY_MAXIMUM_PAGES = 32768;
