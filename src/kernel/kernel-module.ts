/**
 * Loads the compiled plan kernel (build/debug.wasm for tests, build/release.wasm otherwise) and
 * instantiates it over a shared memory. The module imports only `env.memory` and has no data
 * segments, start function or mutable globals, so any number of instances, one per thread,
 * can share the memory (see assembly/abi.ts).
 */
import { fleetError } from '../errors/index.js';
import { ABI_VERSION } from './abi.js';
import { loadBuildWasm } from './build-wasm.js';

export type KernelBuild = 'debug' | 'release';

/** The kernel's exports, typed. */
export interface KernelExports {
  planShard(desc: number): number;
  readFloor(addr: number, bytes: number): number;
  abiVersion(): number;
}

/** Compiles (once per build) the kernel module from build/<build>.wasm. */
export function loadKernelModule(build: KernelBuild): WebAssembly.Module {
  return loadBuildWasm(`${build}.wasm`);
}

/** Instantiates the module over `memory` and checks its ABI version. */
export function instantiateKernel(module: WebAssembly.Module, memory: WebAssembly.Memory): KernelExports {
  const { exports } = new WebAssembly.Instance(module, { env: { memory } });
  const fn = (name: string) => {
    const f = exports[name];
    if (typeof f !== 'function') throw fleetError('FA_ERR_KERNEL', `kernel export ${name} missing`);
    return f;
  };
  const kernel: KernelExports = {
    planShard: fn('planShard') as KernelExports['planShard'],
    readFloor: fn('readFloor') as KernelExports['readFloor'],
    abiVersion: fn('abiVersion') as KernelExports['abiVersion'],
  };
  const version = kernel.abiVersion() >>> 0;
  if (version !== ABI_VERSION) {
    throw fleetError('FA_ERR_KERNEL', `kernel ABI version ${version}, host expects ${ABI_VERSION} (rebuild with npm run build)`);
  }
  return kernel;
}
