/**
 * VolumePluginManager: the registry of volume plugins, by name, and the lookups the controller
 * makes with it (C7: is this spec attachable, and by whom; A5: which plugin owns this unique name).
 * Plugins are fixed at construction, like upstream's `InitPlugins` at controller start.
 */
import { fleetError } from '../errors/index.js';
import { splitUniqueVolumeName, uniqueVolumeName } from './unique-volume-name.js';
import { isAttachablePlugin, type AttachableVolumePlugin, type VolumePlugin } from './volume-plugin.js';
import type { VolumeSpec } from './volume-spec.js';

/** Why no plugin was found for a spec (upstream's "no volume plugin matched" / "multiple volume plugins matched"). */
export type PluginLookup =
  | { readonly found: true; readonly plugin: VolumePlugin }
  | { readonly found: false; readonly reason: 'no-plugin' | 'multiple-plugins'; readonly message: string };

export interface VolumePluginManager {
  /** The plugin registered under `name`, or undefined. */
  findPluginByName(name: string): VolumePlugin | undefined;
  /** The one plugin that supports the spec; zero or several matches are reported, not thrown. */
  findPluginBySpec(spec: VolumeSpec): PluginLookup;
  /** C7: the plugin that supports the spec and says it can attach it, else undefined. */
  findAttachablePluginBySpec(spec: VolumeSpec): AttachableVolumePlugin | undefined;
  /** C7: true iff {@link findAttachablePluginBySpec} finds a plugin. */
  canAttach(spec: VolumeSpec): boolean;
  /** The unique name (vocabulary §1) of a spec supported by exactly one plugin, else undefined. */
  uniqueVolumeName(spec: VolumeSpec): string | undefined;
  /**
   * A5: the attachable plugin owning a unique name and the plugin volume name to detach with;
   * undefined when the name is malformed or its plugin is not registered.
   */
  findAttachablePluginByUniqueName(unique: string): { plugin: AttachableVolumePlugin; volumeName: string } | undefined;
  /** Registered plugin names, in registration order. */
  pluginNames(): string[];
}

export interface VolumePluginManagerDeps {
  plugins: readonly VolumePlugin[];
}

/**
 * Builds the manager. Throws (at start-up, never later) if two plugins share a name or a name is
 * not of the `<domain>/<name>` form every unique name relies on.
 *
 * @example
 * const plugins = createVolumePluginManager({ plugins: [createCsiPlugin(deps)] });
 * const plugin = plugins.findAttachablePluginBySpec(spec); // undefined ⇒ not in desired state
 */
export function createVolumePluginManager(deps: VolumePluginManagerDeps): VolumePluginManager {
  const byName = new Map<string, VolumePlugin>();
  for (const plugin of deps.plugins) {
    if (!/^[^/]+\/[^/]+$/.test(plugin.name)) {
      throw fleetError('FA_ERR_INTERNAL', `volume plugin name must be "<domain>/<name>", got "${plugin.name}"`);
    }
    if (byName.has(plugin.name)) throw fleetError('FA_ERR_INTERNAL', `volume plugin "${plugin.name}" registered twice`);
    byName.set(plugin.name, plugin);
  }
  return new PluginManager(byName);
}

class PluginManager implements VolumePluginManager {
  constructor(private readonly byName: ReadonlyMap<string, VolumePlugin>) {}

  findPluginByName(name: string): VolumePlugin | undefined {
    return this.byName.get(name);
  }

  findPluginBySpec(spec: VolumeSpec): PluginLookup {
    const matches: VolumePlugin[] = [];
    for (const plugin of this.byName.values()) if (plugin.canSupport(spec)) matches.push(plugin);
    if (matches.length === 1) return { found: true, plugin: matches[0]! };
    if (matches.length === 0) {
      return { found: false, reason: 'no-plugin', message: `no volume plugin matched volume "${spec.name}" (source ${describeSource(spec)})` };
    }
    return {
      found: false,
      reason: 'multiple-plugins',
      message: `multiple volume plugins matched volume "${spec.name}": ${matches.map((p) => p.name).join(',')}`,
    };
  }

  findAttachablePluginBySpec(spec: VolumeSpec): AttachableVolumePlugin | undefined {
    const lookup = this.findPluginBySpec(spec);
    if (!lookup.found || !isAttachablePlugin(lookup.plugin)) return undefined;
    return lookup.plugin.canAttach(spec) ? lookup.plugin : undefined;
  }

  canAttach(spec: VolumeSpec): boolean {
    return this.findAttachablePluginBySpec(spec) !== undefined;
  }

  uniqueVolumeName(spec: VolumeSpec): string | undefined {
    const lookup = this.findPluginBySpec(spec);
    if (!lookup.found) return undefined;
    const volumeName = lookup.plugin.getVolumeName(spec);
    return volumeName === undefined ? undefined : uniqueVolumeName(lookup.plugin.name, volumeName);
  }

  findAttachablePluginByUniqueName(unique: string): { plugin: AttachableVolumePlugin; volumeName: string } | undefined {
    const split = splitUniqueVolumeName(unique);
    if (!split) return undefined;
    const plugin = this.byName.get(split.pluginName);
    if (!plugin || !isAttachablePlugin(plugin)) return undefined;
    return { plugin, volumeName: split.volumeName };
  }

  pluginNames(): string[] {
    return [...this.byName.keys()];
  }
}

function describeSource(spec: VolumeSpec): string {
  return spec.source.type === 'other' ? spec.source.name : spec.source.type;
}
