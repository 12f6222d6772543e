/**
 * Piscina worker entry: instantiates the kernel once over the shared memory from workerData,
 * then answers TaskRequests (tasks.ts). Tasks carry addresses, never state.
 */
import { workerData } from 'piscina';
import { instantiateKernel } from './kernel-module.js';
import type { KernelWorkerData, TaskMap, TaskRequest } from './tasks.js';

const data = workerData as KernelWorkerData;
const kernel = instantiateKernel(data.module, data.memory);

export default function run(request: TaskRequest): TaskMap[TaskRequest['name']]['output'] {
  switch (request.name) {
    case 'planShard':
      return { status: kernel.planShard(request.input.desc) >>> 0 };
    case 'readFloor':
      return { checksum: kernel.readFloor(request.input.addr, request.input.bytes) >>> 0 };
  }
}
