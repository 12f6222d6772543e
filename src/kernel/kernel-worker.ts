/**
 * Piscina worker entry: instantiates the kernel once over the shared memory from workerData,
 * then answers TaskRequests (tasks.ts). Tasks carry addresses or list pages, never state.
 */
import { workerData } from 'piscina';
import { encodePage, readPageBytes } from '../kube/list-page.js';
import { KINDS_BY_RESOURCE } from '../kube/projections/kinds.js';
import { createJsonSieve, type JsonSieve, type SieveBuild } from '../kube/sieve/json-sieve.js';
import { instantiateKernel } from './kernel-module.js';
import type { KernelWorkerData, TaskMap, TaskRequest } from './tasks.js';

const data = workerData as KernelWorkerData;
const kernel = instantiateKernel(data.module, data.memory);
/** This thread's sieves, made at their first page. */
const sieves = new Map<SieveBuild, JsonSieve>();
const sieveOf = (build: SieveBuild): JsonSieve => sieves.get(build) ?? sieves.set(build, createJsonSieve({ build })).get(build)!;

export default function run(request: TaskRequest): TaskMap[TaskRequest['name']]['output'] {
  switch (request.name) {
    case 'planShard':
      return { status: kernel.planShard(request.input.desc) >>> 0 };
    case 'readFloor':
      return { checksum: kernel.readFloor(request.input.addr, request.input.bytes) >>> 0 };
    case 'readListPage': {
      const { resource, body, sieve } = request.input;
      const kind = KINDS_BY_RESOURCE.get(resource);
      if (!kind) throw new Error(`no projection for resource ${JSON.stringify(resource)}`);
      return { text: encodePage(readPageBytes(kind, Buffer.from(body.buffer, body.byteOffset, body.byteLength), sieve ? sieveOf(sieve) : undefined)) };
    }
  }
}
