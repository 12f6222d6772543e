/**
 * KernelPool: the Piscina pool of kernel workers, typed by tasks.ts. Piscina's `any` stops
 * here. Each worker instantiates the module once over the shared memory; a task costs about
 * 30-60 µs of messaging, so callers dispatch one task per shard, never per node.
 *
 * Workers start with the first task and exit after `idleMs` without one. Kernels keep no state
 * in a worker, so nothing is lost; what goes back is the worker's isolate and allocator (~100 MB
 * at 10k nodes after the cold start's list pages), while most fleets plan on the main thread and
 * use the pool only for the lists of a start or a relist (docs/performance.md).
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { KernelWorkerData, TaskMap, TaskName, TaskRequest } from './tasks.js';
import { logger } from '../log/logger.js';

export interface KernelPool {
  readonly threads: number;
  /** Workers running now (0 while idle). */
  running(): number;
  /** Runs one task; the buffers in `transfer` are moved to the worker (the caller loses them). */
  run<K extends TaskName>(name: K, input: TaskMap[K]['input'], transfer?: ArrayBuffer[]): Promise<TaskMap[K]['output']>;
  /**
   * Terminates every worker (stopping a kernel call that hangs: terminating a thread ends its
   * WebAssembly too) and starts fresh ones; tasks under way reject. Later tasks run on the new
   * workers, through this same object.
   */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface KernelPoolOptions {
  threads: number;
  data: KernelWorkerData;
  /** A worker exits after this long without a task; default {@link DEFAULT_WORKER_IDLE_MS}. */
  idleMs?: number;
}

export const DEFAULT_WORKER_IDLE_MS = 30_000;

/** Default worker count: the cores left after the main thread, at least 1. */
export function defaultWorkerCount(): number {
  return Math.max(1, availableParallelism() - 1);
}

export function createKernelPool(options: KernelPoolOptions): KernelPool {
  if (!Number.isInteger(options.threads) || options.threads < 1) {
    throw new RangeError('options.threads must be a positive integer');
  }
  // Under tsx (tests, benches) this file is .ts and so is the worker; in dist/ both are .js.
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const start = () => {
    const p = new Piscina({
      filename: new URL(`./kernel-worker${ext}`, import.meta.url).href,
      minThreads: 0,
      maxThreads: options.threads,
      idleTimeout: options.idleMs ?? DEFAULT_WORKER_IDLE_MS,
      workerData: options.data,
    });
    // A worker that dies between tasks is reported here (Piscina replaces it); without a
    // listener the 'error' event would end the process.
    p.on('error', (err: unknown) => logger('kernel-pool').error({ err }, 'plan worker failed outside a task; replaced'));
    return p;
  };
  let pool = start();
  return {
    threads: options.threads,
    running: () => pool.threads.length,
    run<K extends TaskName>(name: K, input: TaskMap[K]['input'], transfer?: ArrayBuffer[]): Promise<TaskMap[K]['output']> {
      const request = { name, input } as TaskRequest<K>;
      return pool.run(request, transfer ? { transferList: transfer } : {}) as Promise<TaskMap[K]['output']>;
    },
    async restart() {
      // The old workers go first (their tasks reject, and destroy resolves once the threads
      // have exited), so a failure to start new ones cannot leave a hung task holding a plan.
      const old = pool;
      await old.destroy().catch((err: unknown) => logger('kernel-pool').warn({ err }, 'old plan workers: destroy failed'));
      if (pool === old) pool = start();
    },
    close: () => pool.destroy(),
  };
}
