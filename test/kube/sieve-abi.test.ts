// The sieve's ABI is defined once in assembly/sieve/abi.ts and mirrored in
// src/kube/sieve/sieve-abi.ts: every constant must agree by name and value, and both builds must
// report the same version and import nothing but the memory the host gives them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import * as abi from '../../src/kube/sieve/sieve-abi.js';
import { createJsonSieve, loadSieveModule } from '../../src/kube/sieve/json-sieve.js';

const root = new URL('../../', import.meta.url);

function assemblyConstants(): Map<string, number> {
  const text = readFileSync(new URL('assembly/sieve/abi.ts', root), 'utf8');
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^export const (\w+): u32 = (0x[0-9a-fA-F]+|\d+);$/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

describe('JSON sieve ABI', () => {
  it('has every assembly/sieve/abi.ts constant mirrored with the same value, and no other', () => {
    const asm = assemblyConstants();
    assert.ok(asm.size >= 18, `parsed only ${asm.size} constants`);
    const host = abi as unknown as Record<string, number>;
    for (const [name, value] of asm) assert.equal(host[name], value, name);
    assert.deepEqual(Object.keys(abi).filter((name) => !asm.has(name)), []);
  });

  it('lays the areas out without overlap', () => {
    assert.ok(abi.RESULT_ADDR + 4 <= abi.STACK_ADDR);
    assert.ok(abi.STACK_ADDR + abi.MAX_DEPTH <= abi.SPEC_BASE);
    assert.equal(abi.SPEC_BASE + abi.SPEC_BYTES, abi.DATA_BASE);
  });

  for (const build of ['debug', 'release'] as const) {
    it(`build/sieve-${build}.wasm imports only env.memory, holds no data segment and reports ABI ${abi.SIEVE_ABI_VERSION}`, () => {
      const module = loadSieveModule(build);
      assert.deepEqual(WebAssembly.Module.imports(module).map((i) => `${i.module}.${i.name}:${i.kind}`), ['env.memory:memory']);
      assert.deepEqual(WebAssembly.Module.exports(module).map((e) => e.name).sort(), ['dataBase', 'memory', 'sieve', 'sieveAbiVersion']);
      // A data segment would be written at instantiation over whatever the host placed there.
      assert.doesNotMatch(readFileSync(new URL(`build/sieve-${build}.wat`, root), 'utf8'), /\(data /);
      const r = createJsonSieve({ build }).sieve({ a: true }, Buffer.from('{"a":1,"b":2}'));
      assert.deepEqual(r, { ok: true, text: '{"a":1}', bytes: 7 });
    });
  }
});
