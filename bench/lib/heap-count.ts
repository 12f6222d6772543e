/**
 * Live JavaScript heap of this process, counted from a V8 heap snapshot taken after two full
 * collections: bytes and objects by kind (strings, ropes, plain objects, arrays, other). What
 * bench:heap charges per pod (the controller) and per stored object (the simulator). Needs
 * `--expose-gc`.
 */
import { writeFileSync } from 'node:fs';
import v8 from 'node:v8';

export type HeapKinds = Record<'string' | 'rope' | 'object' | 'array' | 'other', number>;

export interface HeapCount {
  objects: number;
  bytes: number;
  /** Of `bytes`, those of native nodes: the backing stores of ArrayBuffers and Buffers (memory outside the JavaScript heap that a collection does not mark). */
  nativeBytes: number;
  byKind: HeapKinds;
}

/** Counts a snapshot's nodes by kind (type names from the snapshot's own meta). */
export function countSnapshot(json: string): HeapCount {
  const s = JSON.parse(json) as { snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[]; strings: string[] };
  const meta = s.snapshot.meta;
  const width = meta.node_fields.length;
  const iType = meta.node_fields.indexOf('type');
  const iSize = meta.node_fields.indexOf('self_size');
  const types = meta.node_types[0];
  const byKind: HeapKinds = { string: 0, rope: 0, object: 0, array: 0, other: 0 };
  let bytes = 0;
  let nativeBytes = 0;
  for (let i = 0; i < s.nodes.length; i += width) {
    const t = types[s.nodes[i + iType]!];
    bytes += s.nodes[i + iSize]!;
    if (t === 'native') nativeBytes += s.nodes[i + iSize]!;
    if (t === 'string' || t === 'sliced string') byKind.string++;
    else if (t === 'concatenated string') byKind.rope++;
    else if (t === 'object' || t === 'closure') byKind.object++;
    else if (t === 'array') byKind.array++;
    else byKind.other++;
  }
  return { objects: s.nodes.length / width, bytes, nativeBytes, byKind };
}

/** Collects twice (weak cells, finalizers), snapshots this process's heap and counts it; keeps the snapshot in `file` when given. */
export async function countLiveHeap(file?: string): Promise<HeapCount> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  gc();
  gc();
  const chunks: Buffer[] = [];
  for await (const c of v8.getHeapSnapshot()) chunks.push(c as Buffer);
  const json = Buffer.concat(chunks).toString('utf8');
  if (file) writeFileSync(file, json);
  return countSnapshot(json);
}
