// The ABI is defined once in assembly/abi.ts and mirrored in src/kernel/abi.ts: every constant
// must agree by name and value, and both compiled kernels must carry the same ABI version,
// import nothing but the shared memory, and hold no data segments that a second instance
// would write over the shared tables.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import * as abi from '../../src/kernel/abi.js';
import { instantiateKernel, loadKernelModule } from '../../src/kernel/kernel-module.js';

const root = new URL('../../', import.meta.url);

function assemblyConstants(): Map<string, number> {
  const text = readFileSync(new URL('assembly/abi.ts', root), 'utf8');
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^export const (\w+): u32 = (0x[0-9a-fA-F]+|\d+);$/gm)) out.set(m[1], Number(m[2]));
  return out;
}

describe('kernel ABI', () => {
  it('has every assembly/abi.ts constant mirrored with the same value in src/kernel/abi.ts', () => {
    const asm = assemblyConstants();
    assert.ok(asm.size > 50, `parsed only ${asm.size} constants`);
    const host = abi as unknown as Record<string, number>;
    for (const [name, value] of asm) assert.equal(host[name], value, name);
  });

  it('has no host-only constant that pretends to be part of the kernel ABI', () => {
    const asm = assemblyConstants();
    const hostOnly = Object.keys(abi).filter((name) => !asm.has(name));
    assert.deepEqual(hostOnly.sort(), ['MEMORY_INITIAL_PAGES', 'MEMORY_MAXIMUM_PAGES']);
  });

  it('declares the shared memory limits asconfig.json compiles the kernel with', () => {
    const asconfig = JSON.parse(readFileSync(new URL('asconfig.json', root), 'utf8')) as { options: Record<string, unknown> };
    assert.equal(asconfig.options.initialMemory, abi.MEMORY_INITIAL_PAGES);
    assert.equal(asconfig.options.maximumMemory, abi.MEMORY_MAXIMUM_PAGES);
    assert.equal(asconfig.options.sharedMemory, true);
    assert.equal(asconfig.options.runtime, 'stub');
  });

  for (const build of ['debug', 'release'] as const) {
    it(`build/${build}.wasm imports only env.memory, has no data segments and reports ABI ${abi.ABI_VERSION}`, () => {
      const module = loadKernelModule(build);
      assert.deepEqual(WebAssembly.Module.imports(module).map((i) => `${i.module}.${i.name}:${i.kind}`), ['env.memory:memory']);
      const exported = WebAssembly.Module.exports(module).map((e) => e.name).sort();
      assert.deepEqual(exported, ['abiVersion', 'memory', 'planShard', 'readFloor']);
      const wat = readFileSync(new URL(`build/${build}.wat`, root), 'utf8');
      assert.doesNotMatch(wat, /\(data /);
      assert.doesNotMatch(wat, /\(start /);
      assert.doesNotMatch(wat, /\(global \S+ \(mut/);
      const memory = new WebAssembly.Memory({ initial: abi.MEMORY_INITIAL_PAGES, maximum: abi.MEMORY_MAXIMUM_PAGES, shared: true });
      assert.equal(instantiateKernel(module, memory).abiVersion() >>> 0, abi.ABI_VERSION);
    });
  }

  it('refuses to plan over a memory without the header', () => {
    const memory = new WebAssembly.Memory({ initial: abi.MEMORY_INITIAL_PAGES, maximum: abi.MEMORY_MAXIMUM_PAGES, shared: true });
    const kernel = instantiateKernel(loadKernelModule('debug'), memory);
    assert.equal(kernel.planShard(4096) >>> 0, abi.STATUS_BAD_HEADER);
  });
});
