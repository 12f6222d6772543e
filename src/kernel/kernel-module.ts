/**
 * Loads the compiled plan kernel (build/debug.wasm for tests, build/release.wasm otherwise) and
 * instantiates it over a shared memory. The module imports only `env.memory` and has no data
 * segments, start function or mutable globals, so any number of instances, one per thread,
 * can share the memory (see assembly/abi.ts).
 */
import { readFileSync } from 'node:fs';
import { fleetError } from '../errors/index.js';
import { ABI_VERSION } from './abi.js';

export type KernelBuild = 'debug' | 'release';

/** The kernel's exports, typed. */
export interface KernelExports {
  planShard(desc: number): number;
  readFloor(addr: number, bytes: number): number;
  abiVersion(): number;
}

const cache = new Map<KernelBuild, WebAssembly.Module>();

/** Compiles (once per build) the kernel module from build/<build>.wasm. */
export function loadKernelModule(build: KernelBuild): WebAssembly.Module {
  let module = cache.get(build);
  if (module === undefined) {
    // src/kernel/ and dist/kernel/ are both two levels below the package root.
    const url = new URL(`../../build/${build}.wasm`, import.meta.url);
    let bytes: Buffer;
    try {
      bytes = readFileSync(url);
    } catch (cause) {
      throw fleetError('FA_ERR_KERNEL', `cannot read ${url.pathname} (run npm run build)`, { cause });
    }
    module = new WebAssembly.Module(bytes);
    cache.set(build, module);
  }
  return module;
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
