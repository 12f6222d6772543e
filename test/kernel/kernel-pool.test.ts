// The thread contract: the pool is typed by tasks.ts (misuse does not compile), workers
// instantiate the kernel over the same shared memory, and see what the main thread wrote.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { ABI_VERSION } from '../../src/kernel/abi.js';
import { instantiateKernel, loadKernelModule } from '../../src/kernel/kernel-module.js';
import { createKernelPool, type KernelPool } from '../../src/kernel/kernel-pool.js';

// Compile-time checks only; never called.
export function typeChecks(pool: KernelPool): void {
  // @ts-expect-error unknown task
  void pool.run('planNode', { desc: 0 });
  // @ts-expect-error wrong input for the task
  void pool.run('planShard', { addr: 0, bytes: 16 });
  // @ts-expect-error the output is typed: planShard has no checksum
  void pool.run('planShard', { desc: 0 }).then((out) => out.checksum);
}

describe('kernel pool', () => {
  it('runs tasks in workers over the shared memory the main thread writes', async () => {
    const state = createWorldState();
    for (let i = 0; i < 1000; i++) state.markAttached(state.internVolume(`v${i}`), state.internNode(`n${i % 10}`));
    const access = state.kernelAccess();
    const module = loadKernelModule('debug');
    const main = instantiateKernel(module, access.memory);
    const pool = createKernelPool({ threads: 2, data: { module, memory: access.memory, abiVersion: ABI_VERSION } });
    try {
      for (const r of access.tableRanges()) {
        const bytes = Math.ceil(r.bytes / 16) * 16;
        const inWorker = await pool.run('readFloor', { addr: r.addr, bytes });
        assert.equal(inWorker.checksum, main.readFloor(r.addr, bytes) >>> 0, r.name);
      }
    } finally {
      await pool.close();
    }
  });

  it('rejects a non-positive thread count', () => {
    const memory = createWorldState().kernelAccess().memory;
    assert.throws(() => createKernelPool({ threads: 0, data: { module: loadKernelModule('debug'), memory, abiVersion: ABI_VERSION } }), RangeError);
  });
});
