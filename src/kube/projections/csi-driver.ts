/**
 * CSIDriver projection: whether the driver needs attach (C7; unset means true).
 */
import { META_KEEP, optBool, optRecord, project, record, str, type ResourceKind } from './read.js';

export interface CsiDriverRecord {
  name: string;
  attachRequired: boolean;
}

export function projectCsiDriver(raw: unknown) {
  return project<CsiDriverRecord>(raw, (o) => {
    const meta = record(o.metadata, 'metadata');
    const spec = optRecord(o.spec, 'spec') ?? {};
    return { name: str(meta.name, 'metadata.name'), attachRequired: optBool(spec.attachRequired, 'spec.attachRequired') ?? true };
  });
}

export const CSI_DRIVER_KIND: ResourceKind<CsiDriverRecord> = {
  resource: 'csidrivers',
  path: '/apis/storage.k8s.io/v1/csidrivers',
  namespaced: false,
  project: projectCsiDriver,
  keep: { metadata: META_KEEP, spec: { attachRequired: true } },
};
