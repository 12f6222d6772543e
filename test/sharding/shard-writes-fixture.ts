/**
 * The sharded writes (src/manager/shard-writes.ts) over the fake API client, with a replica that
 * holds the nodes of `owned` (all in bucket 3, epoch 7), a clock the test moves, and the lock's
 * `needed` and the VolumeAttachments by PV given by the test.
 */
import type { PersistentVolumeMeta } from '../../src/kube/api-client.js';
import { logger } from '../../src/log/logger.js';
import type { ShardGuard } from '../../src/manager/controller-options.js';
import type { LockNeeds } from '../../src/manager/lock-needs.js';
import type { ShardRoles } from '../../src/manager/shard-roles.js';
import { createShardWrites } from '../../src/manager/shard-writes.js';
import { ATTACH_LOCK_ANNOTATION, LOCK_BUCKET_LABEL, lockValue } from '../../src/sharding/volume-lock.js';
import { FakeKubeApiClient } from '../kube/fake-api-client.js';

export const BUCKET = 3;
export const EPOCH = 7;

export function pvMeta(name: string, lockedBy?: string): PersistentVolumeMeta {
  return lockedBy === undefined
    ? { name, uid: `uid-${name}`, resourceVersion: '1', annotations: undefined, labels: undefined }
    : { name, uid: `uid-${name}`, resourceVersion: '1', annotations: { [ATTACH_LOCK_ANNOTATION]: lockValue(lockedBy, 1) }, labels: { [LOCK_BUCKET_LABEL]: String(BUCKET) } };
}

export function shardWritesFixture(o: { owned: readonly string[]; guardsOff?: ShardGuard[]; node?: { volumesAttached: string[]; resourceVersion: string }; holdMs?: number; needed?: LockNeeds; attached?: Map<string, Set<string>> }) {
  const api = new FakeKubeApiClient();
  const clock = { t: 0 };
  const owned = new Set(o.owned);
  /** pv → nodes with a VolumeAttachment of it. */
  const attached = o.attached ?? new Map<string, Set<string>>();
  const roles = {
    mayStart: (n: string) => owned.has(n),
    holds: (n: string) => owned.has(n),
    coordinator: { bucketOf: () => BUCKET, epoch: () => EPOCH, ownedBuckets: () => [BUCKET] },
  } as unknown as ShardRoles;
  const writes = createShardWrites({
    api, roles: () => roles, nodes: { get: (name: string) => (o.node ? { name, uid: 'u', managed: true, ready: true, outOfService: false, volumesInUse: [], volumesAttached: o.node.volumesAttached } : undefined), resourceVersionOf: () => o.node?.resourceVersion }, volumeAttachments: new Map(),
    attachedNodes: (pv) => attached.get(pv) ?? new Set(),
    lockNeeds: o.needed ?? (() => undefined),
    lockHoldMs: o.holdMs ?? 1000,
    now: () => clock.t,
    log: logger('test'),
    ...(o.guardsOff ? { guardsOff: o.guardsOff } : {}),
  });
  const holderOf = (pv: string) => api.persistentVolumes.get(pv)?.annotations?.[ATTACH_LOCK_ANNOTATION];
  return { api, clock, owned, attached, writes, holderOf };
}
