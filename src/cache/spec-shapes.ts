/**
 * SpecShapes: an entry spec (src/cache/world-state.ts EntrySpec) split into its shape, the
 * JSON of the spec with its name and its source's volumeHandle left out, and those two
 * strings. Across a fleet the shapes are few (one per driver, access modes and flags), so a
 * spec costs a shape id and two strings of bytes, not its whole JSON. Equal specs (equal JSON)
 * split alike, so specs compare by (shape, name, handle).
 *
 * A spec whose other strings could be taken for the placeholders is kept as its whole JSON
 * (shape RAW, the text as its name).
 */
import { StringInterner } from '../packed/string-interner.js';
import type { EntrySpec } from './world-state.js';

/** No spec. */
export const NO_SPEC = -1;
/** The whole JSON, in place of the name. */
export const RAW = -2;

const NAME = '\u0001';
const HANDLE = '\u0002';
const NAME_JSON = JSON.stringify(NAME);
const HANDLE_JSON = JSON.stringify(HANDLE);

export class SpecShapes {
  private readonly shapes = new StringInterner();
  /**
   * Each shape's JSON parsed once and deeply frozen (a handful of objects): `join` copies its
   * top object and source and shares the rest (access modes, attributes), which specs' readers
   * only read.
   */
  private readonly parsed: unknown[] = [];
  /** Results of the last `split`: the shape id, the name and the handle ('' for none). */
  shape = NO_SPEC;
  name = '';
  handle = '';
  private last: EntrySpec | undefined;
  private lastTemplate = '';
  private lastShape = NO_SPEC;

  /** Splits `spec` into `shape`, `name` and `handle`. */
  split(spec: EntrySpec): void {
    if (spec === this.last) return;
    this.last = spec;
    if (typeof spec !== 'object') {
      this.set(NAME_JSON, String(spec), '');
      return;
    }
    const o = spec as { name?: unknown; source?: { volumeHandle?: unknown } };
    const hasName = typeof o.name === 'string';
    const src = o.source;
    const hasHandle = typeof src === 'object' && src !== null && typeof src.volumeHandle === 'string';
    // Most specs have the last one's shape: checked against its parsed model, with no template built.
    if (this.lastShape !== NO_SPEC && fits(spec, this.model(this.lastShape), true)) {
      this.shape = this.lastShape;
      this.name = hasName ? (o.name as string) : '';
      this.handle = hasHandle ? (src?.volumeHandle as string) : '';
      return;
    }
    const copy: Record<string, unknown> = { ...spec };
    if (hasName) copy.name = NAME;
    if (hasHandle) copy.source = { ...src, volumeHandle: HANDLE };
    const template = JSON.stringify(copy);
    if ((hasName && !once(template, NAME_JSON)) || (hasHandle && !once(template, HANDLE_JSON))
      || (!hasName && template.includes(NAME_JSON)) || (!hasHandle && template.includes(HANDLE_JSON))) {
      this.shape = RAW;
      this.name = JSON.stringify(spec);
      this.handle = '';
      return;
    }
    this.set(template, hasName ? (o.name as string) : '', hasHandle ? (src?.volumeHandle as string) : '');
  }

  /** The spec of (shape, name, handle): a fresh object (or the bare name). */
  join(shape: number, name: string, handle: string): EntrySpec {
    if (shape === RAW) return JSON.parse(name) as EntrySpec;
    const model = this.model(shape);
    if (model === NAME) return name;
    const m = model as { name?: unknown; source?: { volumeHandle?: unknown } };
    const o: Record<string, unknown> = { ...m };
    if (m.name === NAME) o.name = name;
    if (m.source?.volumeHandle === HANDLE) o.source = { ...m.source, volumeHandle: handle };
    return o as unknown as EntrySpec;
  }

  private model(shape: number): unknown {
    let model = this.parsed[shape];
    if (model === undefined) {
      model = deepFreeze(JSON.parse(this.shapes.name(shape) as string) as unknown);
      this.parsed[shape] = model;
    }
    return model;
  }

  private set(template: string, name: string, handle: string): void {
    // Shapes are never released: a fleet has a handful, and most specs in a row share one.
    if (template !== this.lastTemplate) {
      this.lastTemplate = template;
      this.lastShape = this.shapes.intern(template);
    }
    this.shape = this.lastShape;
    this.name = name;
    this.handle = handle;
  }
}

/**
 * Whether `v` has the shape `model` (a parsed, placeholder-holding template): equal as JSON
 * but for a string name where the model has the name placeholder and a string volumeHandle
 * where its source has the handle placeholder. Conservative: anything unusual (a toJSON, a
 * number JSON writes otherwise) answers false, and the spec takes the template path.
 */
function fits(v: unknown, model: unknown, top: boolean): boolean {
  if (typeof v !== 'object' || v === null) return v === model && (typeof v !== 'number' || Number.isFinite(v));
  if (typeof model !== 'object' || model === null || Array.isArray(v) !== Array.isArray(model)) return false;
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  const m = model as Record<string, unknown>;
  const o = v as Record<string, unknown>;
  if (Array.isArray(v)) {
    const a = model as unknown[];
    if (v.length !== a.length) return false;
    for (let i = 0; i < v.length; i++) if (v[i] === undefined || !fits(v[i], a[i], false)) return false;
    return true;
  }
  let n = 0;
  for (const k in o) {
    const x = o[k];
    if (x === undefined) continue;
    n++;
    if (!Object.hasOwn(m, k)) return false;
    const y = m[k];
    if (top && k === 'name' && y === NAME) {
      if (typeof x !== 'string') return false;
    } else if (top && k === 'source' && typeof y === 'object' && y !== null && (y as { volumeHandle?: unknown }).volumeHandle === HANDLE) {
      if (typeof x !== 'object' || x === null || typeof (x as { volumeHandle?: unknown }).volumeHandle !== 'string') return false;
      if (!fits({ ...(x as object), volumeHandle: HANDLE }, y, false)) return false;
    } else if (!fits(x, y, false)) return false;
  }
  return n === Object.keys(m).length;
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
    Object.freeze(v);
  }
  return v;
}

function once(text: string, part: string): boolean {
  const i = text.indexOf(part);
  return i >= 0 && text.indexOf(part, i + 1) < 0;
}
