/**
 * How V8 holds a string: `string` (flat), `concatenated string` (a rope), `sliced string`, …, as a
 * heap snapshot of this process names it.
 *
 * Why tests ask: a string built by `+` or a template literal is a rope of its parts, which V8
 * flattens only when something reads it whole; kept for a long time, a rope costs every
 * scavenge more than the flat string would (src/sim/store/create-sim-store.ts,
 * withResourceVersion). Costs a heap snapshot (~0.5 s in a test process).
 */
import v8 from 'node:v8';

/** Holds the string under test: the snapshot finds it by this class's name and its `value` edge. */
class StringShapeProbe {
  constructor(readonly value: string) {}
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** The probe of the snapshot being taken: held here so that it is in the heap the snapshot walks. */
let held: StringShapeProbe | undefined;

export async function stringShape(s: string): Promise<string> {
  const chunks: string[] = [];
  held = new StringShapeProbe(s);
  try {
    for await (const c of v8.getHeapSnapshot()) chunks.push(String(c));
  } finally {
    held = undefined;
  }
  const snap = JSON.parse(chunks.join('')) as Snapshot;
  const { node_fields: nf, node_types: [types], edge_fields: ef } = snap.snapshot.meta;
  const [type, name, edgeCount] = ['type', 'name', 'edge_count'].map((f) => nf.indexOf(f));
  const [edgeName, toNode] = ['name_or_index', 'to_node'].map((f) => ef.indexOf(f));
  let edge = 0;
  for (let n = 0; n < snap.nodes.length; n += nf.length) {
    const count = snap.nodes[n + edgeCount];
    if (types[snap.nodes[n + type]] === 'object' && snap.strings[snap.nodes[n + name]] === StringShapeProbe.name) {
      for (let e = edge; e < edge + count * ef.length; e += ef.length) {
        if (snap.strings[snap.edges[e + edgeName]] === 'value') return types[snap.nodes[snap.edges[e + toNode] + type]];
      }
    }
    edge += count * ef.length;
  }
  throw new Error('stringShape: the probe is not in the heap snapshot');
}
