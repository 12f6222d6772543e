/**
 * CSINode projection: the in-tree plugins migrated on this node (C6).
 */
import { META_KEEP, optRecord, optStr, project, record, str, type ResourceKind } from './read.js';

export const MIGRATED_PLUGINS_ANNOTATION = 'storage.alpha.kubernetes.io/migrated-plugins';

export interface CsiNodeRecord {
  /** Same as the Node's name. */
  name: string;
  /** In-tree plugin names (e.g. `kubernetes.io/aws-ebs`), from the comma-separated annotation. */
  migratedPlugins: string[];
}

export function projectCsiNode(raw: unknown) {
  return project<CsiNodeRecord>(raw, (o) => {
    const meta = record(o.metadata, 'metadata');
    const annotations = optRecord(meta.annotations, 'metadata.annotations') ?? {};
    const list = optStr(annotations[MIGRATED_PLUGINS_ANNOTATION], `metadata.annotations[${MIGRATED_PLUGINS_ANNOTATION}]`) ?? '';
    return {
      name: str(meta.name, 'metadata.name'),
      migratedPlugins: list.split(',').map((s) => s.trim()).filter((s) => s.length > 0),
    };
  });
}

export const CSI_NODE_KIND: ResourceKind<CsiNodeRecord> = {
  resource: 'csinodes',
  path: '/apis/storage.k8s.io/v1/csinodes',
  namespaced: false,
  project: projectCsiNode,
  keep: { metadata: { ...META_KEEP, annotations: { [MIGRATED_PLUGINS_ANNOTATION]: true } } },
};
