// The thread contract: the pool is typed by tasks.ts (misuse does not compile), workers
// instantiate the kernel over the same shared memory, and see what the main thread wrote.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { ABI_VERSION } from '../../src/kernel/abi.js';
import { instantiateKernel, loadKernelModule } from '../../src/kernel/kernel-module.js';
import { createKernelPool, type KernelPool } from '../../src/kernel/kernel-pool.js';
import { decodePage, projectPage } from '../../src/kube/list-page.js';
import { POD_KIND } from '../../src/kube/projections/index.js';
import { listPageReader } from '../../src/manager/adapters.js';

// Compile-time checks only; never called.
export function typeChecks(pool: KernelPool): void {
  // @ts-expect-error unknown task
  void pool.run('planNode', { desc: 0 });
  // @ts-expect-error wrong input for the task
  void pool.run('planShard', { addr: 0, bytes: 16 });
  // @ts-expect-error the output is typed: planShard has no checksum
  void pool.run('planShard', { desc: 0 }).then((out) => out.checksum);
}

/** A state with `volumes` attached volumes, the pool's worker data over its memory, and the kernel on the main thread. */
function kernelFixture(volumes: number) {
  const state = createWorldState();
  for (let i = 0; i < volumes; i++) state.markAttached(state.internVolume(`v${i}`), state.internNode(`n${i % 10}`));
  const access = state.kernelAccess();
  const module = loadKernelModule('debug');
  return { access, main: instantiateKernel(module, access.memory), data: { module, memory: access.memory, abiVersion: ABI_VERSION } };
}

/** Asserts that a worker reads the first table as the main thread does. */
async function assertFirstTableRead(pool: KernelPool, f: ReturnType<typeof kernelFixture>, message?: string): Promise<void> {
  const r0 = f.access.tableRanges()[0]!;
  const bytes = Math.ceil(r0.bytes / 16) * 16;
  assert.equal((await pool.run('readFloor', { addr: r0.addr, bytes })).checksum, f.main.readFloor(r0.addr, bytes) >>> 0, message);
}

describe('kernel pool', () => {
  it('runs tasks in workers over the shared memory the main thread writes', async () => {
    const f = kernelFixture(1000);
    const { access, main } = f;
    const pool = createKernelPool({ threads: 2, data: f.data });
    try {
      for (const r of access.tableRanges()) {
        const bytes = Math.ceil(r.bytes / 16) * 16;
        const inWorker = await pool.run('readFloor', { addr: r.addr, bytes });
        assert.equal(inWorker.checksum, main.readFloor(r.addr, bytes) >>> 0, r.name);
      }
      // A restart rejects what was under way and serves later tasks from fresh workers.
      const r0 = access.tableRanges()[0]!;
      const bytes = Math.ceil(r0.bytes / 16) * 16;
      const underWay = pool.run('readFloor', { addr: r0.addr, bytes }).then(() => 'done', () => 'rejected');
      await pool.restart();
      assert.ok(['done', 'rejected'].includes(await underWay));
      await assertFirstTableRead(pool, f, 'after the restart');
    } finally {
      await pool.close();
    }
  });

  it('reads a list page in a worker as the main thread would, moving its own buffer and copying a shared one', async () => {
    const state = createWorldState();
    const access = state.kernelAccess();
    const pool = createKernelPool({ threads: 1, data: { module: loadKernelModule('debug'), memory: access.memory, abiVersion: ABI_VERSION } });
    try {
      const items = Array.from({ length: 40 }, (_, i) => ({
        metadata: { name: `p${i}`, namespace: `ns${i % 3}`, uid: `u${i}`, resourceVersion: String(100 + i) },
        spec: { nodeName: `n${i % 4}`, volumes: i === 7 ? 'bad' : [{ name: 'data', persistentVolumeClaim: { claimName: `c${i}` } }] },
        status: { phase: 'Running' },
      }));
      const text = JSON.stringify({ metadata: { resourceVersion: '150', continue: 'tok' }, items });
      const inPlace = projectPage(POD_KIND, text);
      const content = (p: typeof inPlace) => ({ items: p.items, rv: p.resourceVersion, cont: p.continueToken });

      const own = Buffer.from(new TextEncoder().encode(text).buffer);
      const raw = await pool.run('readListPage', { resource: 'pods', body: own }, [own.buffer as ArrayBuffer]);
      assert.equal(own.byteLength, 0, 'moved: the sender no longer holds the bytes');
      assert.deepEqual(content(decodePage(POD_KIND, raw.text)), content(inPlace));

      const shared = Buffer.from(`xx${text}`).subarray(2); // a view into a larger buffer
      const read = listPageReader(pool);
      assert.deepEqual(content(await read(POD_KIND, shared)), content(inPlace));
      assert.equal(shared.toString(), text, 'copied, not moved: the shared buffer is intact');

      const sieved = listPageReader(pool, 'debug');
      assert.deepEqual(content(await sieved(POD_KIND, Buffer.from(text))), content(inPlace));
      await assert.rejects(sieved(POD_KIND, Buffer.from('{"items":[')), /JSON/);

      await assert.rejects(pool.run('readListPage', { resource: 'widgets', body: new Uint8Array(2) }), /no projection for resource "widgets"/);
      await assert.rejects(read(POD_KIND, Buffer.from('{"items":')), /JSON/);
    } finally {
      await pool.close();
    }
  });

  it('starts a worker with a task and lets it exit once idle; a later task starts one again', async () => {
    const f = kernelFixture(100);
    const pool = createKernelPool({ threads: 1, idleMs: 20, data: f.data });
    const untilRunning = async (n: number) => {
      for (let i = 0; i < 500 && pool.running() !== n; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(pool.running(), n);
    };
    try {
      assert.equal(pool.running(), 0, 'no worker before the first task');
      await assertFirstTableRead(pool, f);
      await untilRunning(0);
      await assertFirstTableRead(pool, f, 'after the idle exit');
    } finally {
      await pool.close();
    }
  });

  it('rejects a non-positive thread count', () => {
    const memory = createWorldState().kernelAccess().memory;
    assert.throws(() => createKernelPool({ threads: 0, data: { module: loadKernelModule('debug'), memory, abiVersion: ABI_VERSION } }), RangeError);
  });
});
