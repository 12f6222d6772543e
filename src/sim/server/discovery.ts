/**
 * Discovery documents (legacy, unaggregated form), enough for kubectl and client-node to map
 * kinds, plural names and short names to paths. Built once: they never change at run time.
 * kubectl asks for aggregated discovery first and falls back to these when the response is
 * plain `application/json`.
 */
import { API_GROUPS, resourcesOf, type ResourceInfo } from '../store/resources.js';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const SUB_VERBS = ['get', 'patch', 'update'];

/** The Kubernetes version the simulator reports (the API it mirrors). */
export const SIM_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0-fleet-attach-sim' };

function resourceEntries(r: ResourceInfo): object[] {
  const main = {
    name: r.name,
    singularName: r.singular,
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: VERBS,
    ...(r.shortNames.length ? { shortNames: r.shortNames } : {}),
    ...(r.categories.length ? { categories: r.categories } : {}),
    storageVersionHash: Buffer.from(`${r.apiVersion}/${r.kind}`).toString('base64').slice(0, 11),
  };
  if (!r.status) return [main];
  return [main, { name: `${r.name}/status`, singularName: '', namespaced: r.namespaced, kind: r.kind, verbs: SUB_VERBS }];
}

function groupVersion(group: string): string {
  return group === '' ? 'v1' : `${group}/v1`;
}

function apiGroup(group: string): object {
  const gv = { groupVersion: groupVersion(group), version: 'v1' };
  return { name: group, versions: [gv], preferredVersion: gv };
}

export interface DiscoveryDocs {
  version(): string;
  apiVersions(serverAddress: string): string;
  groupList(): string;
  group(group: string): string;
  resourceList(group: string): string;
}

export function createDiscovery(): DiscoveryDocs {
  const resourceLists = new Map<string, string>();
  for (const g of API_GROUPS) {
    resourceLists.set(g, JSON.stringify({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersion(g), resources: (resourcesOf(g, 'v1') ?? []).flatMap(resourceEntries) }));
  }
  const groupList = JSON.stringify({ kind: 'APIGroupList', apiVersion: 'v1', groups: API_GROUPS.filter((g) => g !== '').map(apiGroup) });
  const version = JSON.stringify({
    ...SIM_VERSION,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'gc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  });
  return {
    version: () => version,
    apiVersions: (serverAddress) => JSON.stringify({ kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] }),
    groupList: () => groupList,
    group: (g) => JSON.stringify({ kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(g) }),
    resourceList: (g) => resourceLists.get(g) ?? '{}',
  };
}
