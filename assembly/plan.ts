// The plan kernel: one call per shard, a pure function of the tables named by the header and
// of the shard descriptor. It allocates nothing, keeps no globals and writes only
//   - the shard's output records and descriptor cursors, and
//   - the detach timer (PF_TIMER_SET, PR_TIMER) of the pairs inside the shard's range,
// so any number of instances over the one shared memory may run shards concurrently.
//
// Decisions follow ../shared/reference/upstream-adc.md: detach F1-F9, attach G1-G4,
// multi-attach H1-H5 (I1-I4 via the pending/backoff bits the host keeps), node status K3.
import {
  ABI_MAGIC, HEADER_ADDR, H_MAGIC, H_PAIR_FLAGS, H_PAIR_RECORDS, H_NODE_FLAGS, H_VOLUME_WORDS, VW_FLAGS_BYTE,
  H_PAIR_CAPACITY, H_NODE_CAPACITY,
  PF_DESIRED, PF_ATTACHED, PF_UNCERTAIN, PF_TIMER_SET, PF_MOUNTED, PF_MAE_REPORTED, PF_PENDING,
  PF_BACKOFF_ATTACH, PF_BACKOFF_DETACH, PF_SCAN_MASK, PF_STEADY,
  PAIR_RECORD_SIZE, PR_VOLUME, PR_NODE, PR_TIMER,
  VF_FORBIDDEN, VF_ATTACHED_ANY, VF_WIDE_PENDING, VF_PAIR_PENDING_ANY, VF_WIDE_BACKOFF_ATTACH,
  VF_WIDE_BACKOFF_DETACH,
  NF_HEALTHY, NF_OUT_OF_SERVICE, NF_STATUS_NEEDED,
  DESC_ALIGN, D_PAIR_BEGIN, D_PAIR_END, D_NODE_BEGIN, D_NODE_END, D_PAIR_CURSOR, D_NODE_CURSOR, D_OUT,
  D_OUT_CAPACITY, D_OUT_LENGTH, D_NOW, D_OPTIONS, D_MAX_WAIT, D_STATUS, D_ATTACH_ROOM, D_ATTACH_SKIP,
  D_ATTACH_OMITTED,
  OPT_DISABLE_FORCE_DETACH, OUT_RECORD_SIZE, OUT_VOLUME, OUT_NODE, OUT_CODE, NIL,
  ACTION_DETACH, ACTION_ATTACH, ACTION_CONFLICT, ACTION_STATUS,
  DF_FORCED_TIMEOUT, DF_OUT_OF_SERVICE, DF_VERIFY_SAFE, DF_TIMER_STARTED,
  STATUS_OK, STATUS_OUTPUT_FULL, STATUS_BAD_HEADER, STATUS_BAD_DESCRIPTOR,
} from './abi';

// Result of deciding one pair: an output code (0 = nothing) in the low 32 bits.
const NONE: u32 = 0;

@inline function emit(out: usize, at: u32, volume: u32, node: u32, code: u32): void {
  const rec = out + <usize>at * OUT_RECORD_SIZE;
  store<u32>(rec + OUT_VOLUME, volume);
  store<u32>(rec + OUT_NODE, node);
  store<u32>(rec + OUT_CODE, code);
}

// F1-F9 for a pair that is in ASW (attached or uncertain) and not desired.
// Returns the detach code, or NONE when the pair waits; starts the timer (F4) when first seen.
@inline function decideDetach(
  flagsAt: usize, flags: u32, rec: usize, volumeFlags: u32, nodeFlags: u32,
  now: u32, maxWait: f64, options: u32,
): u32 {
  // F2 (I1, I4): the exact key is pending or its detach is backing off: skip, timer untouched.
  if (volumeFlags & VF_FORBIDDEN) {
    if (volumeFlags & (VF_WIDE_PENDING | VF_WIDE_BACKOFF_DETACH)) return NONE;
  } else if (flags & (PF_PENDING | PF_BACKOFF_DETACH)) {
    return NONE;
  }
  // F4: start the timer on first sight, else read it.
  let started: u32 = 0;
  let elapsed: f64 = 0;
  if (flags & PF_TIMER_SET) {
    elapsed = <f64>now - <f64>load<u32>(rec + PR_TIMER);
  } else {
    store<u32>(rec + PR_TIMER, now);
    store<u16>(flagsAt, <u16>(flags | PF_TIMER_SET));
    started = DF_TIMER_STARTED;
  }
  const timerExpired = elapsed > maxWait;
  // F5
  const forceTimeout = timerExpired && (options & OPT_DISABLE_FORCE_DETACH) == 0;
  const forceDetach = (nodeFlags & NF_HEALTHY) == 0 && forceTimeout;
  const oos = (nodeFlags & NF_OUT_OF_SERVICE) != 0;
  // F6: a mounted volume waits unless forced or out of service.
  if ((flags & PF_MOUNTED) != 0 && !forceDetach && !oos) return NONE;
  // F7-F9, F11
  let code = ACTION_DETACH | started;
  if (forceTimeout) code |= DF_FORCED_TIMEOUT;
  if (oos) code |= DF_OUT_OF_SERVICE;
  if (!(forceTimeout || oos)) code |= DF_VERIFY_SAFE;
  return code;
}

// G1-G4 for a desired pair.
@inline function decideAttach(flagsAt: usize, flags: u32, volumeFlags: u32): u32 {
  const forbidden = (volumeFlags & VF_FORBIDDEN) != 0;
  // G1 (I2): any operation on the volume when forbidden; on (volume, node) or volume-wide else.
  if (forbidden) {
    if (volumeFlags & (VF_WIDE_PENDING | VF_PAIR_PENDING_ANY)) return NONE;
  } else if ((flags & PF_PENDING) != 0 || (volumeFlags & VF_WIDE_PENDING) != 0) {
    return NONE;
  }
  // G2 / D5: attached and desired resets the detach timer. Uncertain counts as not attached.
  if (flags & PF_ATTACHED) {
    if (flags & PF_TIMER_SET) store<u16>(flagsAt, <u16>(flags & ~PF_TIMER_SET));
    return NONE;
  }
  // G3 / H4: forbidden and confirmed elsewhere: a conflict, reported once per desired entry.
  if (forbidden && (volumeFlags & VF_ATTACHED_ANY) != 0) {
    return (flags & PF_MAE_REPORTED) != 0 ? NONE : ACTION_CONFLICT;
  }
  // G4 (I3): an attach on a key inside its backoff window would be refused quietly.
  const backoff = forbidden ? (volumeFlags & VF_WIDE_BACKOFF_ATTACH) : (flags & PF_BACKOFF_ATTACH);
  return backoff != 0 ? NONE : ACTION_ATTACH;
}

// Plans one shard described at `desc`; see the D_* fields. Resumable: on STATUS_OUTPUT_FULL
// the cursors say where to continue once the host has drained (or enlarged) the output.
export function planShard(desc: usize): u32 {
  if (load<u32>(HEADER_ADDR + H_MAGIC) != ABI_MAGIC) return STATUS_BAD_HEADER;
  if ((desc & (DESC_ALIGN - 1)) != 0) return STATUS_BAD_DESCRIPTOR;
  const pairFlags = <usize>load<u32>(HEADER_ADDR + H_PAIR_FLAGS);
  const pairRecords = <usize>load<u32>(HEADER_ADDR + H_PAIR_RECORDS);
  const nodeFlags = <usize>load<u32>(HEADER_ADDR + H_NODE_FLAGS);
  const volumeWords = <usize>load<u32>(HEADER_ADDR + H_VOLUME_WORDS);
  const pairEnd = load<u32>(desc + D_PAIR_END);
  const nodeEnd = load<u32>(desc + D_NODE_END);
  if (pairEnd > load<u32>(HEADER_ADDR + H_PAIR_CAPACITY) || nodeEnd > load<u32>(HEADER_ADDR + H_NODE_CAPACITY)
    || load<u32>(desc + D_PAIR_BEGIN) > pairEnd || load<u32>(desc + D_NODE_BEGIN) > nodeEnd
    || (pairEnd & 7) != 0 || (nodeEnd & 15) != 0) {
    store<u32>(desc + D_STATUS, STATUS_BAD_DESCRIPTOR);
    return STATUS_BAD_DESCRIPTOR;
  }
  const out = <usize>load<u32>(desc + D_OUT);
  const outCapacity = load<u32>(desc + D_OUT_CAPACITY);
  let outLength = load<u32>(desc + D_OUT_LENGTH);
  const now = load<u32>(desc + D_NOW);
  const options = load<u32>(desc + D_OPTIONS);
  const maxWait = load<f64>(desc + D_MAX_WAIT);
  let attachRoom = load<u32>(desc + D_ATTACH_ROOM);
  let attachSkip = load<u32>(desc + D_ATTACH_SKIP);
  let attachOmitted = load<u32>(desc + D_ATTACH_OMITTED);

  // K3: nodes whose status must be written.
  let n = load<u32>(desc + D_NODE_CURSOR);
  const statusMask = i8x16.splat(<i8>NF_STATUS_NEEDED);
  while (n < nodeEnd) {
    if ((n & 15) == 0 && !v128.any_true(v128.and(v128.load(nodeFlags + n), statusMask))) {
      n += 16;
      continue;
    }
    if (load<u8>(nodeFlags + n) & NF_STATUS_NEEDED) {
      if (outLength >= outCapacity) {
        return suspend(desc, n, load<u32>(desc + D_PAIR_CURSOR), outLength, attachRoom, attachSkip, attachOmitted);
      }
      emit(out, outLength++, NIL, n, ACTION_STATUS);
    }
    n++;
  }

  // E1 detach pass and attach pass, fused: each pair is in exactly one of them.
  let i = load<u32>(desc + D_PAIR_CURSOR);
  const scanMask = i16x8.splat(<i16>PF_SCAN_MASK);
  const steady = i16x8.splat(<i16>PF_STEADY);
  const zero = i16x8.splat(0);
  while (i < pairEnd) {
    if ((i & 7) == 0) {
      const m = v128.and(v128.load(pairFlags + (<usize>i << 1)), scanMask);
      if (i16x8.all_true(v128.or(i16x8.eq(m, zero), i16x8.eq(m, steady)))) {
        i += 8;
        continue;
      }
    }
    const flagsAt = pairFlags + (<usize>i << 1);
    const flags = <u32>load<u16>(flagsAt);
    const state = flags & PF_SCAN_MASK;
    if (state != 0 && state != PF_STEADY) {
      if (outLength >= outCapacity) return suspend(desc, nodeEnd, i, outLength, attachRoom, attachSkip, attachOmitted);
      const rec = pairRecords + <usize>i * PAIR_RECORD_SIZE;
      const volume = load<u32>(rec + PR_VOLUME);
      const vflags = <u32>load<u8>(volumeWords + (<usize>volume << 2) + VW_FLAGS_BYTE);
      let code: u32 = NONE;
      let node: u32 = 0;
      if (flags & PF_DESIRED) {
        code = decideAttach(flagsAt, flags, vflags);
        if (code == ACTION_ATTACH) {
          if (attachSkip != 0 || attachRoom == 0) {
            if (attachSkip != 0) attachSkip--;
            attachOmitted++;
            code = NONE;
          } else {
            attachRoom--;
          }
        }
        if (code != NONE) node = load<u32>(rec + PR_NODE);
      } else if (flags & (PF_ATTACHED | PF_UNCERTAIN)) {
        node = load<u32>(rec + PR_NODE);
        code = decideDetach(flagsAt, flags, rec, vflags, <u32>load<u8>(nodeFlags + node), now, maxWait, options);
      }
      if (code != NONE) emit(out, outLength++, volume, node, code);
    }
    i++;
  }
  store<u32>(desc + D_NODE_CURSOR, nodeEnd);
  store<u32>(desc + D_PAIR_CURSOR, pairEnd);
  store<u32>(desc + D_OUT_LENGTH, outLength);
  storeWindow(desc, attachRoom, attachSkip, attachOmitted);
  store<u32>(desc + D_STATUS, STATUS_OK);
  return STATUS_OK;
}

@inline function storeWindow(desc: usize, room: u32, skip: u32, omitted: u32): void {
  store<u32>(desc + D_ATTACH_ROOM, room);
  store<u32>(desc + D_ATTACH_SKIP, skip);
  store<u32>(desc + D_ATTACH_OMITTED, omitted);
}

function suspend(desc: usize, nodeCursor: u32, pairCursor: u32, outLength: u32, room: u32, skip: u32, omitted: u32): u32 {
  store<u32>(desc + D_NODE_CURSOR, nodeCursor);
  store<u32>(desc + D_PAIR_CURSOR, pairCursor);
  store<u32>(desc + D_OUT_LENGTH, outLength);
  storeWindow(desc, room, skip, omitted);
  store<u32>(desc + D_STATUS, STATUS_OUTPUT_FULL);
  return STATUS_OUTPUT_FULL;
}
