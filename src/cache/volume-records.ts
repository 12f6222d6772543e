/**
 * VolumeRecords: the host-side facts the world state keeps per volume id, as bytes: the
 * volume's info (`setVolumeInfo`) and the spec its desired entries share (§C, `volumeSpecs` of
 * the world core's file comment), plus the rare entry whose spec differs from its volume's.
 * Readers get objects decoded on demand, which die young; nothing per volume stays on the heap.
 *
 * An info is a VolumeInfo (src/populator/volume-info.ts) when its fields other than uniqueName,
 * pluginName, spec and lastError are the ones derived from its spec: it is kept as its spec's
 * JSON (part a of its arena record) and those three (part b: plugin name as a shared id, the
 * last error, the unique name when it is not the volume's name), and read back with the
 * derived fields rebuilt. Any other object is kept as its JSON; any other value (not an object)
 * as itself.
 *
 * Specs are compared by value (their JSON), not by identity: an entry's spec is its volume's
 * when it encodes the same. A volume's entry spec equal to its info's spec is not stored twice:
 * it reads the info's record, and is copied out before the info's spec changes.
 */
import { ByteArena } from '../packed/byte-arena.js';
import { StringInterner } from '../packed/string-interner.js';
import { deriveVolumeInfo, type VolumeInfo } from '../populator/volume-info.js';
import type { VolumeSpec } from '../plugins/volume-spec.js';
import type { EntrySpec } from './world-state.js';

const BASE_NONE = 0;
/** The volume's entry spec is its info's spec (part a of its info record). */
const BASE_INFO = 1;
/** The volume's entry spec has its own record in `bases`. */
const BASE_OWN = 2;

export class VolumeRecords {
  private readonly infos = new ByteArena();
  private readonly bases = new ByteArena();
  private baseKind = new Uint8Array(64);
  /** Plugin names by id: a handful, shared by every volume. */
  private readonly plugins = new StringInterner();
  /** Infos that are not objects (test doubles): rare. */
  private readonly others = new Map<number, unknown>();
  /** Entry specs other than their volume's, by pair slot (text): rare. */
  readonly pairSpecs = new Map<number, string>();
  /** The last spec encoded and its text: the populator passes one spec object to setVolumeInfo and then to each entry. */
  private lastSpec: object | undefined;
  private lastSpecText = '';

  /** Payload bytes held. */
  get bytes(): number {
    return this.infos.bytes + this.bases.bytes;
  }

  setInfo(volume: number, volumeName: string, info: unknown): void {
    this.others.delete(volume);
    if (typeof info !== 'object' || info === null) {
      this.keepBase(volume, '');
      if (this.infos.has(volume)) this.infos.clear(volume);
      if (info !== undefined) this.others.set(volume, info);
      return;
    }
    const v = info as VolumeInfo;
    let specText = '';
    let meta: string;
    if (isDerived(v)) {
      specText = v.spec === undefined ? '' : this.encodeSpec(v.spec);
      const unique = v.uniqueName === volumeName ? 0 : v.uniqueName;
      meta = `V${JSON.stringify([this.plugins.intern(v.pluginName), v.lastError ?? 0, unique])}`;
    } else {
      meta = `J${JSON.stringify(info)}`;
    }
    this.keepBase(volume, specText);
    while (this.infos.slotLimit <= volume) this.infos.newSlot();
    this.infos.set(volume, specText, meta);
  }

  info(volume: number, volumeName: () => string): unknown {
    if (!this.infos.has(volume)) return this.others.get(volume);
    const meta = this.infos.text(volume, 1);
    if (meta.charCodeAt(0) === 74 /* J */) return JSON.parse(meta.slice(1));
    const [plugin, lastError, unique] = JSON.parse(meta.slice(1)) as [number, VolumeInfo['lastError'] | 0, string | 0];
    const specText = this.infos.text(volume, 0);
    const spec = specText === '' ? undefined : (JSON.parse(specText) as VolumeSpec);
    return deriveVolumeInfo(unique === 0 ? volumeName() : unique, this.plugins.name(plugin) as string, spec, lastError === 0 ? undefined : lastError);
  }

  /** The spec text of the volume's entries (see the file comment), or undefined. */
  baseSpec(volume: number): string | undefined {
    const k = this.baseKind[volume];
    if (k === BASE_INFO) return this.infos.text(volume, 0);
    if (k === BASE_OWN) return this.bases.text(volume, 0);
    return undefined;
  }

  hasBaseSpec(volume: number): boolean {
    return this.baseKind[volume] > BASE_NONE;
  }

  setBaseSpec(volume: number, text: string): void {
    if (volume >= this.baseKind.length) {
      const k = new Uint8Array(Math.max(volume + 1, this.baseKind.length * 2));
      k.set(this.baseKind);
      this.baseKind = k;
    }
    if (this.infos.has(volume) && this.infos.length(volume, 0) > 0 && this.infos.text(volume, 0) === text) {
      this.baseKind[volume] = BASE_INFO;
      return;
    }
    while (this.bases.slotLimit <= volume) this.bases.newSlot();
    this.bases.set(volume, text, '');
    this.baseKind[volume] = BASE_OWN;
  }

  /** Drops everything kept for the volume (its id is freed). */
  clearVolume(volume: number): void {
    this.others.delete(volume);
    if (this.infos.has(volume)) this.infos.clear(volume);
    if (this.bases.has(volume)) this.bases.clear(volume);
    if (volume < this.baseKind.length) this.baseKind[volume] = BASE_NONE;
  }

  /** A spec as text: JSON, so that equal specs encode alike (a bare name as a JSON string). */
  encodeSpec(spec: EntrySpec): string {
    if (typeof spec !== 'object') return JSON.stringify(spec);
    if (spec === this.lastSpec) return this.lastSpecText;
    const text = JSON.stringify(spec);
    this.lastSpec = spec;
    this.lastSpecText = text;
    return text;
  }

  /** Before the info's spec becomes `next`: an entry spec that reads the info's own record keeps its text. */
  private keepBase(volume: number, next: string): void {
    if (this.baseKind[volume] !== BASE_INFO) return;
    const text = this.infos.text(volume, 0);
    if (text === next) return;
    while (this.bases.slotLimit <= volume) this.bases.newSlot();
    this.bases.set(volume, text, '');
    this.baseKind[volume] = BASE_OWN;
  }
}

export function decodeSpec(text: string): EntrySpec {
  return JSON.parse(text) as EntrySpec;
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
