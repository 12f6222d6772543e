/**
 * CSI migration (rule C6, upstream `translateInTreeSpecToCSIIfNeeded`): an in-tree PV or inline
 * volume is handed to the CSI plugin, under the CSI unique name, when migration is complete for
 * its in-tree plugin or the node's CSINode lists the plugin in its migrated-plugins annotation.
 * The in-tree attachers of these sources are gone here (as in current upstream releases), so
 * such a source that is not migrated on the node, or that cannot be translated, is skipped: the
 * result says why, and the reason is logged once. iSCSI and FC keep their in-tree plugins
 * (plugins/intree/attach-only-plugins.ts) and are never translated.
 */
import { logger, type Logger } from '../../log/logger.js';
import type { InTreeSource, VolumeSpec } from '../volume-spec.js';
import { IN_TREE_TRANSLATORS, MIGRATION_COMPLETE_PLUGINS, type InTreeTranslator } from './in-tree-translators.js';

/** CSINode annotation listing the in-tree plugins migrated on the node, comma-separated. */
export const MIGRATED_PLUGINS_ANNOTATION = 'storage.alpha.kubernetes.io/migrated-plugins';

/** Whether volumes of in-tree plugin `inTreePluginName` go through CSI on node `nodeName`. */
export type MigrationPredicate = (inTreePluginName: string, nodeName: string) => boolean;

export type TranslationResult =
  /** Not an in-tree source (CSI or other): the spec as given. */
  | { readonly status: 'unchanged'; readonly spec: VolumeSpec }
  /** Translated: a CSI spec, `migrated: true`. */
  | { readonly status: 'translated'; readonly spec: VolumeSpec; readonly inTreePluginName: string }
  /** In-tree but not usable on this node: skip the volume. */
  | { readonly status: 'skipped'; readonly reason: string; readonly inTreePluginName: string };

export interface CsiTranslator {
  /** C6 for one (spec, node). Pure apart from logging a skip reason the first time it is seen. */
  translateForNode(spec: VolumeSpec, nodeName: string): TranslationResult;
}

export interface CsiTranslatorDeps {
  isMigrated: MigrationPredicate;
  log?: Logger;
}

/**
 * @example
 * const translator = createCsiTranslator({ isMigrated: createMigrationPredicate({ csiNodeAnnotation }) });
 * const r = translator.translateForNode(spec, pod.nodeName);
 * if (r.status !== 'skipped') dsw.add(plugins.uniqueVolumeName(r.spec), …);
 */
export function createCsiTranslator(deps: CsiTranslatorDeps): CsiTranslator {
  const log = deps.log ?? logger('csi-migration');
  const reported = new Set<string>();
  return {
    translateForNode(spec, nodeName) {
      const result = translateIfMigrated(spec, nodeName, deps.isMigrated);
      if (result.status === 'skipped') {
        const key = `${spec.name}\u0000${result.reason}`;
        if (!reported.has(key)) {
          // Bounded: the set is a log throttle, not state; forgetting only means logging again.
          if (reported.size >= 10_000) reported.clear();
          reported.add(key);
          log.info({ volume: spec.name, node: nodeName, plugin: result.inTreePluginName, reason: result.reason }, 'volume skipped: in-tree source not usable through CSI');
        }
      }
      return result;
    },
  };
}

/** C6 without logging: translation when the predicate says the plugin is migrated on the node. */
export function translateIfMigrated(spec: VolumeSpec, nodeName: string, isMigrated: MigrationPredicate): TranslationResult {
  const translator = translatorFor(spec);
  if (!translator) return { status: 'unchanged', spec };
  if (!isMigrated(translator.inTreePluginName, nodeName)) {
    return {
      status: 'skipped',
      inTreePluginName: translator.inTreePluginName,
      reason: `CSI migration of ${translator.inTreePluginName} is not enabled on node ${nodeName} and in-tree attach is not supported`,
    };
  }
  return translateInTreeSpecToCsi(spec);
}

/** Upstream `TranslateInTreeSpecToCSI`: in-tree PV or inline volume → CSI spec, regardless of nodes. */
export function translateInTreeSpecToCsi(spec: VolumeSpec): TranslationResult {
  const translator = translatorFor(spec);
  if (!translator) return { status: 'unchanged', spec };
  const inTreePluginName = translator.inTreePluginName;
  if (spec.origin === 'inline') {
    const t = translator.translateInline(spec);
    if (!t.ok) return { status: 'skipped', inTreePluginName, reason: t.error };
    const { source, accessModes, pvName } = t.value;
    const { type: _type, ...csi } = source;
    const translated: VolumeSpec = {
      name: pvName,
      origin: 'inline-migrated',
      source,
      accessModes,
      readOnly: spec.readOnly,
      migrated: true,
      // The PersistentVolumeSpec JSON sent as VolumeAttachment spec.source.inlineVolumeSpec (L2).
      inlineVolumeSpec: { csi, accessModes: [...accessModes], volumeMode: 'Filesystem' },
    };
    return { status: 'translated', spec: translated, inTreePluginName };
  }
  const t = translator.translatePv(spec);
  if (!t.ok) return { status: 'skipped', inTreePluginName, reason: t.error };
  const translated: VolumeSpec = {
    name: spec.name,
    origin: spec.origin,
    source: t.value.source,
    accessModes: t.value.accessModes,
    readOnly: spec.readOnly,
    migrated: true,
    ...(spec.unknownAccessModes ? { unknownAccessModes: true as const } : {}),
    ...(spec.zoneLabel !== undefined ? { zoneLabel: spec.zoneLabel } : {}),
  };
  return { status: 'translated', spec: translated, inTreePluginName };
}

function translatorFor(spec: VolumeSpec): InTreeTranslator | undefined {
  const type = spec.source.type;
  if (type === 'csi' || type === 'other' || type === 'iscsi' || type === 'fc') return undefined;
  return IN_TREE_TRANSLATORS.get(type satisfies InTreeSource['type']);
}

/** Parses the migrated-plugins annotation value (upstream splits on "," without trimming). */
export function parseMigratedPlugins(annotation: string | undefined): Set<string> {
  return new Set(annotation ? annotation.split(',') : []);
}

export interface MigrationPredicateDeps {
  /** In-tree plugins whose migration is complete everywhere; default {@link MIGRATION_COMPLETE_PLUGINS}. */
  migrationComplete?: Iterable<string>;
  /** The node's CSINode {@link MIGRATED_PLUGINS_ANNOTATION} value; undefined when there is no CSINode or no annotation. */
  csiNodeAnnotation: (nodeName: string) => string | undefined;
}

/** Upstream `isCSIMigrationSupportedOnNode`: complete for the plugin, or listed on the node's CSINode. */
export function createMigrationPredicate(deps: MigrationPredicateDeps): MigrationPredicate {
  const complete = new Set(deps.migrationComplete ?? MIGRATION_COMPLETE_PLUGINS);
  return (plugin, nodeName) => complete.has(plugin) || parseMigratedPlugins(deps.csiNodeAnnotation(nodeName)).has(plugin);
}
