/**
 * The compiled WebAssembly modules in build/ (the kernel's and the JSON sieve's targets), each
 * compiled once per process. `npm run build` (or scripts/ensure-build.js) writes them.
 */
import { readFileSync } from 'node:fs';
import { fleetError } from '../errors/index.js';

const cache = new Map<string, WebAssembly.Module>();

/** The module in build/`file`; throws FA_ERR_KERNEL, naming the build command, when it is missing. */
export function loadBuildWasm(file: string): WebAssembly.Module {
  let module = cache.get(file);
  if (module === undefined) {
    // src/kernel/ and dist/kernel/ are both two levels below the package root.
    const url = new URL(`../../build/${file}`, import.meta.url);
    let bytes: Buffer;
    try {
      bytes = readFileSync(url);
    } catch (cause) {
      throw fleetError('FA_ERR_KERNEL', `cannot read ${url.pathname} (run npm run build)`, { cause });
    }
    module = new WebAssembly.Module(bytes);
    cache.set(file, module);
  }
  return module;
}
