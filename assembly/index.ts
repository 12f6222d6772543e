// The kernel module's exports: the ABI surface and nothing else.
import { ABI_VERSION } from './abi';

export { planShard } from './plan';
export { readFloor } from './floor';

/** The ABI_VERSION this module was compiled with; the host refuses a mismatch. */
export function abiVersion(): u32 {
  return ABI_VERSION;
}
