/**
 * Connects the checker, the bucket holders and the takeover timer to a running simulator: the
 * current objects first (as if just added, no writer), then every committed change in commit
 * order with its writer from the write log. Also counts the VolumeAttachment creates and
 * deletions the replicas commit, with their times, for throughput.
 */
import type { Simulator } from '../../../src/sim/server/index.js';
import type { ResourceName } from '../../../src/sim/store/index.js';
import { createBucketHolders, type BucketHolders } from './bucket-holders.js';
import { createChaosChecker, type ChaosChecker, type Writer } from './checker.js';
import { createTakeoverTimer, type TakeoverTimer } from './takeover-timer.js';

export interface Observation {
  holders: BucketHolders;
  checker: ChaosChecker;
  timer: TakeoverTimer;
  /** performance.now() of every VolumeAttachment create or delete committed by a replica. */
  opTimes(): number[];
  stop(): void;
}

const FOLLOWED: ReadonlySet<string> = new Set(['nodes', 'pods', 'persistentvolumeclaims', 'persistentvolumes', 'volumeattachments', 'leases']);
const INITIAL: readonly ResourceName[] = ['persistentvolumes', 'persistentvolumeclaims', 'nodes', 'pods', 'volumeattachments', 'leases'];

export function observe(sim: Simulator, o: { buckets: number; isReplica: (user: string) => boolean; maxWaitForUnmountMs: number }): Observation {
  const holders = createBucketHolders(o.buckets);
  const checker = createChaosChecker({ holders, isReplica: o.isReplica, maxWaitForUnmountMs: o.maxWaitForUnmountMs });
  const timer = createTakeoverTimer();
  const ops: number[] = [];
  const log = sim.writeLog;
  if (!log) throw new Error('the scale-out bench needs the simulator write log');
  const offHolder = holders.onChange((b, h) => timer.onHolder(b, h, performance.now()));
  const vaNode = new Map<string, string>();
  for (const r of INITIAL) {
    for (const obj of sim.store.list(r)) {
      if (r === 'leases' && !obj.metadata.name.startsWith('fleet-attach-')) continue;
      checker.apply({ rv: 0, at: performance.now(), type: 'ADDED', resource: r, namespace: obj.metadata.namespace, name: obj.metadata.name, object: obj });
      if (r === 'volumeattachments') vaNode.set(obj.metadata.name, (obj.spec as { nodeName: string }).nodeName);
    }
  }
  const unsubscribe = sim.store.subscribe((ev) => {
    if (!FOLLOWED.has(ev.resource)) return;
    if (ev.resource === 'leases' && !ev.name.startsWith('fleet-attach-')) return;
    const at = performance.now();
    const rec = log.since(ev.rv - 1, 1)[0];
    const writer: Writer | undefined = rec && rec.rv === ev.rv ? { user: rec.user, verb: rec.verb, ...(rec.subresource ? { subresource: rec.subresource } : {}) } : undefined;
    const object = ev.view();
    checker.apply({ rv: ev.rv, at, type: ev.type, resource: ev.resource, namespace: ev.namespace, name: ev.name, object, writer });
    if (!writer || !o.isReplica(writer.user)) return;
    let node: string | undefined;
    if (ev.resource === 'nodes' && writer.subresource === 'status') node = ev.name;
    if (ev.resource === 'volumeattachments') {
      if (ev.type === 'ADDED') vaNode.set(ev.name, (object.spec as { nodeName: string }).nodeName);
      node = vaNode.get(ev.name);
      if (writer.verb === 'create' || writer.verb === 'delete') ops.push(at);
    }
    if (node !== undefined) timer.onWrite(writer.user, holders.bucketOf(node), at);
  });
  return {
    holders,
    checker,
    timer,
    opTimes: () => ops,
    stop() {
      unsubscribe();
      offHolder();
    },
  };
}
