/**
 * VolumeRecords: the host-side facts the world state keeps per volume id, as bytes: the
 * volume's info (`setVolumeInfo`) and the spec its desired entries share (§C), plus the rare
 * entry whose spec differs from its volume's. Readers get objects decoded on demand, which die
 * young; nothing per volume stays on the heap.
 *
 * An info is a VolumeInfo (src/populator/volume-info.ts) when its fields other than uniqueName,
 * pluginName, spec and lastError are the ones derived from its spec: its record holds the
 * spec split by SpecShapes (name, handle unless it is the end of the volume's CSI unique
 * name, shape id) and the plugin name's shared id (with, as
 * JSON, the last error and the unique name when it is not the volume's name, if any); it is
 * read back with the derived fields rebuilt. Any other object is kept as its JSON; any other value
 * (not an object) as itself.
 *
 * Specs are compared by value (their JSON, by way of their split), not by identity. A volume's
 * entry spec equal to its info's spec is not stored twice: it reads the info's record, and is
 * copied out before the info's spec changes.
 */
import { ByteArena, bytesEqualText } from '../packed/byte-arena.js';
import { StringInterner } from '../packed/string-interner.js';
import { deriveVolumeInfo, type VolumeInfo } from '../populator/volume-info.js';
import type { VolumeSpec } from '../plugins/volume-spec.js';
import { NO_SPEC, RAW, SpecShapes } from './spec-shapes.js';
import type { EntrySpec } from './world-state.js';

/** The world state's volume interner, as VolumeRecords reads it. */
export type VolumeNames = Pick<StringInterner, 'name' | 'chunkOf' | 'byteStart' | 'byteLength'>;

const BASE_NONE = 0;
/** The volume's entry spec is its info's spec (its info record's name and handle). */
const BASE_INFO = 1;
/** The volume's entry spec has its own record in `bases`. */
const BASE_OWN = 2;

export class VolumeRecords {
  /** Per volume: spec name (a), handle (b), meta (c: `<plugin id>`, `V[plugin, lastError, unique]` or `J<json>`). */
  private readonly infos = new ByteArena();
  private infoShape = new Int32Array(64).fill(NO_SPEC);
  /** 1: the info's handle is not stored, it is what follows the first '^' of the volume's name (CSI). */
  private handleInName = new Uint8Array(64);
  /** Per volume with an entry spec of its own: its name (a) and handle (b). */
  private readonly bases = new ByteArena();
  private baseKind = new Uint8Array(64);
  private baseShape = new Int32Array(64).fill(NO_SPEC);
  private readonly shapes = new SpecShapes();
  /** Plugin names by id: a handful, shared by every volume. */
  private readonly plugins = new StringInterner();
  private lastPlugin = '';
  private lastPluginId = -1;
  /** Infos that are not objects (test doubles): rare. */
  private readonly others = new Map<number, unknown>();
  /** Entry specs other than their volume's, by pair slot, as JSON: rare. */
  readonly pairSpecs = new Map<number, string>();

  /** `names` gives a live volume id's name (the world state's volume interner). */
  constructor(private readonly names: VolumeNames) {}

  /** Payload bytes held. */
  get bytes(): number {
    return this.infos.bytes + this.bases.bytes;
  }

  setInfo(volume: number, info: unknown): void {
    const volumeName = this.names.name(volume) as string;
    this.others.delete(volume);
    this.room(volume);
    if (typeof info !== 'object' || info === null) {
      this.keepBase(volume, NO_SPEC, '', '');
      if (this.infos.has(volume)) this.infos.clear(volume);
      this.infoShape[volume] = NO_SPEC;
      this.handleInName[volume] = 0;
      if (info !== undefined) this.others.set(volume, info);
      return;
    }
    const v = info as VolumeInfo;
    let shape = NO_SPEC;
    let name = '';
    let handle = '';
    let meta: string;
    if (isDerived(v)) {
      if (v.spec !== undefined) {
        const s = this.shapes;
        s.split(v.spec);
        shape = s.shape;
        name = s.name;
        handle = s.handle;
      }
      const plugin = this.pluginId(v.pluginName);
      // The common case as just the plugin id; a last error or another unique name as JSON.
      meta = v.uniqueName === volumeName && v.lastError === undefined
        ? String(plugin)
        : `V${JSON.stringify([plugin, v.lastError ?? 0, v.uniqueName === volumeName ? 0 : v.uniqueName])}`;
    } else {
      meta = `J${JSON.stringify(info)}`;
    }
    this.keepBase(volume, shape, name, handle);
    const inName = handle !== '' && shape !== RAW && handleOf(volumeName) === handle;
    this.infos.set(volume, name, inName ? '' : handle, meta);
    this.infoShape[volume] = shape;
    this.handleInName[volume] = inName ? 1 : 0;
  }

  info(volume: number): unknown {
    if (!this.infos.has(volume)) return this.others.get(volume);
    const meta = this.infos.text(volume, 2);
    const tag = meta.charCodeAt(0);
    if (tag === 74 /* J */) return JSON.parse(meta.slice(1));
    const [plugin, lastError, unique]: [number, VolumeInfo['lastError'] | 0, string | 0] = tag === 86 /* V */
      ? (JSON.parse(meta.slice(1)) as [number, VolumeInfo['lastError'] | 0, string | 0])
      : [Number(meta), 0, 0];
    const shape = this.infoShape[volume];
    const spec = shape === NO_SPEC ? undefined : (this.shapes.join(shape, this.infos.text(volume, 0), this.infoHandle(volume)) as VolumeSpec);
    return deriveVolumeInfo(unique === 0 ? (this.names.name(volume) as string) : unique, this.plugins.name(plugin) as string, spec, lastError === 0 ? undefined : lastError);
  }

  /**
   * A new desired entry's spec (undefined: none given, the entry reads its volume's): the first
   * given since the volume id went live becomes the volume's; an entry given another keeps it.
   */
  setEntrySpec(volume: number, slot: number, spec: EntrySpec | undefined): void {
    this.pairSpecs.delete(slot);
    if (spec === undefined) return;
    this.room(volume);
    const s = this.shapes;
    s.split(spec);
    const k = this.baseKind[volume];
    if (k === BASE_NONE) {
      if (this.infoIs(volume, s.shape, s.name, s.handle)) this.baseKind[volume] = BASE_INFO;
      else this.setOwnBase(volume, s.shape, s.name, s.handle);
    } else if (k === BASE_INFO ? !this.infoIs(volume, s.shape, s.name, s.handle) : !this.ownBaseIs(volume, s.shape, s.name, s.handle)) {
      this.pairSpecs.set(slot, JSON.stringify(spec));
    }
  }

  /** The spec of a desired entry (a fresh copy), or undefined when none was given. */
  entrySpec(volume: number, slot: number): EntrySpec | undefined {
    const own = this.pairSpecs.get(slot);
    if (own !== undefined) return JSON.parse(own) as EntrySpec;
    const k = this.baseKind[volume];
    if (k === BASE_INFO) return this.shapes.join(this.infoShape[volume], this.infos.text(volume, 0), this.infoHandle(volume));
    if (k === BASE_OWN) return this.shapes.join(this.baseShape[volume], this.bases.text(volume, 0), this.bases.text(volume, 1));
    return undefined;
  }

  hasBaseSpec(volume: number): boolean {
    return this.baseKind[volume] > BASE_NONE;
  }

  /** Drops everything kept for the volume (its id is freed). */
  clearVolume(volume: number): void {
    this.others.delete(volume);
    if (this.infos.has(volume)) this.infos.clear(volume);
    if (this.bases.has(volume)) this.bases.clear(volume);
    if (volume < this.baseKind.length) {
      this.baseKind[volume] = BASE_NONE;
      this.infoShape[volume] = NO_SPEC;
      this.baseShape[volume] = NO_SPEC;
      this.handleInName[volume] = 0;
    }
  }

  private pluginId(name: string): number {
    if (name !== this.lastPlugin) {
      this.lastPlugin = name;
      this.lastPluginId = this.plugins.intern(name);
    }
    return this.lastPluginId;
  }

  private infoHandle(volume: number): string {
    return this.handleInName[volume] === 1 ? handleOf(this.names.name(volume) as string) : this.infos.text(volume, 1);
  }

  private infoIs(volume: number, shape: number, name: string, handle: string): boolean {
    if (shape === NO_SPEC || this.infoShape[volume] !== shape || !partEquals(this.infos, volume, 0, name)) return false;
    if (this.handleInName[volume] === 0) return partEquals(this.infos, volume, 1, handle);
    const n = this.names;
    return handleEquals(n.chunkOf(volume), n.byteStart(volume), n.byteLength(volume), handle);
  }

  private ownBaseIs(volume: number, shape: number, name: string, handle: string): boolean {
    return this.baseShape[volume] === shape && partEquals(this.bases, volume, 0, name) && partEquals(this.bases, volume, 1, handle);
  }

  private setOwnBase(volume: number, shape: number, name: string, handle: string): void {
    while (this.bases.slotLimit <= volume) this.bases.newSlot();
    this.bases.set(volume, name, handle);
    this.baseShape[volume] = shape;
    this.baseKind[volume] = BASE_OWN;
  }

  /** Before the info's spec becomes (shape, name, handle): an entry spec reading the info's record keeps its own copy. */
  private keepBase(volume: number, shape: number, name: string, handle: string): void {
    if (this.baseKind[volume] !== BASE_INFO || this.infoIs(volume, shape, name, handle)) return;
    this.setOwnBase(volume, this.infoShape[volume], this.infos.text(volume, 0), this.infoHandle(volume));
  }

  private room(volume: number): void {
    while (this.infos.slotLimit <= volume) this.infos.newSlot();
    if (volume < this.baseKind.length) return;
    const n = Math.max(volume + 1, this.baseKind.length * 2);
    const kind = new Uint8Array(n);
    kind.set(this.baseKind);
    this.baseKind = kind;
    this.infoShape = grown(this.infoShape, n);
    const inName = new Uint8Array(n);
    inName.set(this.handleInName);
    this.handleInName = inName;
    this.baseShape = grown(this.baseShape, n);
  }
}

/** Whether part `part` of the slot's record is `s`: its chars against the bytes while ASCII, else decoded. */
function partEquals(arena: ByteArena, slot: number, part: 0 | 1, s: string): boolean {
  return bytesEqualText(arena.chunkOf(slot), arena.start(slot, part), arena.length(slot, part), s);
}

/** Whether what follows the first '^' of the name in `buf[start, start + len)` is `s`. */
function handleEquals(buf: Buffer, start: number, len: number, s: string): boolean {
  for (let i = start; i < start + len; i++) if (buf[i] === 94 /* ^ */) return bytesEqualText(buf, i + 1, start + len - i - 1, s);
  return s === '';
}


/** What follows the first '^' of a CSI volume's unique name (`kubernetes.io/csi/<driver>^<handle>`), or ''. */
function handleOf(uniqueName: string): string {
  const i = uniqueName.indexOf('^');
  return i < 0 ? '' : uniqueName.slice(i + 1);
}

function grown(a: Int32Array<ArrayBuffer>, n: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(n).fill(NO_SPEC);
  b.set(a);
  return b;
}

/** Whether the info's fields other than uniqueName, pluginName, spec and lastError are the derived ones. */
function isDerived(v: VolumeInfo): boolean {
  if (typeof v.uniqueName !== 'string' || typeof v.pluginName !== 'string') return false;
  const spec = v.spec as Partial<VolumeSpec> | undefined;
  if (spec !== undefined && (typeof spec !== 'object' || spec === null || typeof spec.source !== 'object' || spec.source === null
    || typeof spec.name !== 'string' || !Array.isArray(spec.accessModes))) return false;
  const d = deriveVolumeInfo(v.uniqueName, v.pluginName, v.spec, v.lastError) as unknown as Record<string, unknown>;
  const o = v as unknown as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length !== Object.keys(d).length) return false;
  for (const k of keys) {
    if (!(k in d)) return false;
    const a = o[k];
    const b = d[k];
    if (a === b || k === 'spec' || k === 'lastError') continue;
    if (typeof a !== 'object' || JSON.stringify(a) !== JSON.stringify(b)) return false;
  }
  return true;
}
