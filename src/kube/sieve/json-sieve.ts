/**
 * The JSON sieve (assembly/sieve): a list page's bytes in, the smaller JSON text that keeps only
 * what a projection reads out, so that JSON.parse builds a fraction of the objects. One instance
 * per thread, over a memory of its own that grows to twice the largest body sieved and stays.
 */
import { fleetError } from '../../errors/index.js';
import { loadBuildWasm } from '../../kernel/build-wasm.js';
import { SpecTable, type KeepSpec } from './keep-spec.js';
import { DATA_BASE, OUT_SLACK, RESULT_ADDR, R_NON_ASCII, SIEVE_ABI_VERSION, STATUS_INVALID } from './sieve-abi.js';

export type SieveBuild = 'debug' | 'release';

/** `invalid`: not JSON (JSON.parse of the body throws); `unsupported`: valid but left to JSON.parse whole. */
export type SieveResult = { ok: true; text: string; bytes: number } | { ok: false; status: 'invalid' | 'unsupported' };

export interface JsonSieve {
  /** `body` with only the members `spec` names (keep-spec.ts). */
  sieve(spec: KeepSpec, body: Uint8Array): SieveResult;
}

export interface JsonSieveDeps {
  /** Default `release`. */
  build?: SieveBuild;
  /**
   * The most memory the sieve may hold (default {@link DEFAULT_MAX_MEMORY_BYTES}); a body needing
   * more is read whole. A sieve's memory never shrinks, and each worker has one.
   */
  maxMemoryBytes?: number;
}

interface SieveExports {
  sieve(root: number, input: number, length: number, output: number): number;
  sieveAbiVersion(): number;
  dataBase(): number;
}

export function loadSieveModule(build: SieveBuild): WebAssembly.Module {
  return loadBuildWasm(`sieve-${build}.wasm`);
}

export function createJsonSieve(deps: JsonSieveDeps = {}): JsonSieve {
  const maximum = Math.max(2, Math.floor((deps.maxMemoryBytes ?? DEFAULT_MAX_MEMORY_BYTES) / PAGE));
  return new WasmJsonSieve(loadSieveModule(deps.build ?? 'release'), new WebAssembly.Memory({ initial: 2, maximum }));
}

const PAGE = 65536;
/**
 * Room for pages of ~60 MB (twice that, input and output): 5,000 production-sized pods (~25 MB)
 * fit, and a larger page is parsed whole rather than held in every thread's memory for good.
 */
export const DEFAULT_MAX_MEMORY_BYTES = 128 * 2 ** 20;

class WasmJsonSieve implements JsonSieve {
  private readonly exports: SieveExports;
  private readonly specs = new SpecTable(() => new DataView(this.memory.buffer));

  constructor(
    module: WebAssembly.Module,
    private readonly memory: WebAssembly.Memory,
  ) {
    this.exports = new WebAssembly.Instance(module, { env: { memory: this.memory } }).exports as unknown as SieveExports;
    const version = this.exports.sieveAbiVersion() >>> 0;
    if (version !== SIEVE_ABI_VERSION || this.exports.dataBase() !== DATA_BASE) {
      throw fleetError('FA_ERR_KERNEL', `JSON sieve ABI version ${version}, host expects ${SIEVE_ABI_VERSION} (rebuild with npm run build)`);
    }
  }

  sieve(spec: KeepSpec, body: Uint8Array): SieveResult {
    const root = this.specs.rootOf(spec);
    const input = DATA_BASE;
    const output = Math.ceil((input + body.length) / 8) * 8; // no 32-bit wrap for any body length
    const needed = output + body.length + OUT_SLACK;
    if (needed > this.memory.buffer.byteLength) {
      try {
        this.memory.grow(Math.ceil((needed - this.memory.buffer.byteLength) / PAGE));
      } catch {
        // No room for twice the body (the maximum, or the end of wasm32): the host parses it whole.
        return { ok: false, status: 'unsupported' };
      }
    }
    new Uint8Array(this.memory.buffer, input, body.length).set(body);
    const n = this.exports.sieve(root, input, body.length, output);
    if (n < 0) return { ok: false, status: -n === STATUS_INVALID ? 'invalid' : 'unsupported' };
    const nonAscii = new DataView(this.memory.buffer).getUint32(RESULT_ADDR + R_NON_ASCII, true) !== 0;
    const text = Buffer.from(this.memory.buffer, output, n).toString(nonAscii ? 'utf8' : 'latin1');
    return { ok: true, text, bytes: n };
  }
}
