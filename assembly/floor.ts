// The benchmark floor: a bare sequential read of `bytes` bytes at `addr` (both multiples of
// 16), summed so the loads cannot be optimised away. It is what any plan over the same
// bytes must at least pay in memory bandwidth.
export function readFloor(addr: usize, bytes: usize): u32 {
  let acc = i32x4.splat(0);
  const end = addr + bytes;
  let p = addr;
  while (p + 64 <= end) {
    acc = i32x4.add(acc, v128.load(p));
    acc = i32x4.add(acc, v128.load(p, 16));
    acc = i32x4.add(acc, v128.load(p, 32));
    acc = i32x4.add(acc, v128.load(p, 48));
    p += 64;
  }
  while (p < end) {
    acc = i32x4.add(acc, v128.load(p));
    p += 16;
  }
  return <u32>(i32x4.extract_lane(acc, 0) ^ i32x4.extract_lane(acc, 1) ^ i32x4.extract_lane(acc, 2) ^ i32x4.extract_lane(acc, 3));
}
