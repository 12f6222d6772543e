/**
 * An in-tree volume source (read.ts `InTreeSource`) in a packed record, for the pod and PV codecs:
 * its type and field names as shared ids, string values as bytes (volume IDs are unique), numbers
 * as doubles, FC's lists as lists of strings. Fields keep their order.
 */
import type { InTreeSource } from './read.js';
import type { RecordReader, RecordWriter } from './record-codec.js';

const STRING = 0;
const NUMBER = 1;
const TRUE = 2;
const FALSE = 3;
const LIST = 4;

export function encodeInTree(src: InTreeSource, w: RecordWriter): void {
  w.shared(src.type);
  const keys = Object.keys(src.fields);
  w.uint(keys.length);
  for (const k of keys) {
    const v = src.fields[k]!;
    w.shared(k);
    if (typeof v === 'string') {
      w.uint(STRING);
      w.str(v);
    } else if (typeof v === 'number') {
      w.uint(NUMBER);
      w.float(v);
    } else if (typeof v === 'boolean') w.uint(v ? TRUE : FALSE);
    else {
      w.uint(LIST);
      w.strList(v);
    }
  }
}

export function decodeInTree(r: RecordReader): InTreeSource {
  const type = r.shared() as InTreeSource['type'];
  const n = r.uint();
  const fields: InTreeSource['fields'] = {};
  for (let i = 0; i < n; i++) {
    const k = r.shared();
    const tag = r.uint();
    fields[k] = tag === STRING ? r.str() : tag === NUMBER ? r.float() : tag === TRUE ? true : tag === FALSE ? false : r.strList();
  }
  return { type, fields };
}
