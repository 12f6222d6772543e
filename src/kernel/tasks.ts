/**
 * The thread contract: every task a kernel worker runs, with its input and output, and the
 * data each worker starts with. The pool wrapper (kernel-pool.ts) and the worker
 * (kernel-worker.ts) both type themselves against this file; nothing else crosses the thread
 * boundary. State travels through the shared memory, never through task messages; what a
 * message carries is input (an address, or a list page's bytes, moved rather than copied).
 */

export interface TaskMap {
  /** Runs the plan kernel on the shard whose descriptor is at `desc` (a shared-memory address). */
  planShard: { input: { desc: number }; output: { status: number } };
  /** The bandwidth floor: a bare sequential read of [addr, addr + bytes). */
  readFloor: { input: { addr: number; bytes: number }; output: { checksum: number } };
  /**
   * Parses and projects one list page of `resource` (kube/list-page.ts `readPageBytes`), through
   * the JSON sieve of build `sieve` when given; answers with the page in `encodePage`'s text.
   * `body` is moved: the sender loses it.
   */
  readListPage: { input: { resource: string; body: Uint8Array; sieve?: 'debug' | 'release' }; output: { text: string } };
}

export type TaskName = keyof TaskMap;

/** The message a worker receives: the task name and its input. */
export type TaskRequest<K extends TaskName = TaskName> = { [N in K]: { name: N; input: TaskMap[N]['input'] } }[K];

/** Given to every worker at start-up (structured-cloned: the module and memory are shared). */
export interface KernelWorkerData {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  abiVersion: number;
}
