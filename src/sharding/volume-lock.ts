/**
 * VolumeLock: the per-volume arbiter for volumes that must not be attached to two nodes at once
 * (ReadWriteOnce). The lock is the annotation {@link ATTACH_LOCK_ANNOTATION} on the
 * PersistentVolume, naming the one node that may attach it and the bucket epoch of the replica
 * that wrote it, with the label {@link LOCK_BUCKET_LABEL} = that node's bucket, so that the owner
 * of a bucket can list the locks it has to reconcile.
 *
 * Every write is a compare-and-swap on the one PV object, which etcd linearises: whatever each
 * replica believes, at most one node holds a volume's lock at any time, and a replica acting on
 * a stale read fails its write (it re-reads and then sees the holder).
 *
 * Contract for callers:
 * - attach a forbidden-multi-attach volume to a node only after `take` answered `taken` or
 *   `already-held` for that node;
 * - `release` only once the node's VolumeAttachment for the volume is gone (deleted, not just
 *   marked for deletion): the lock is what keeps a second node from attaching meanwhile;
 * - `conflict` is not an error: the PV changed under every attempt; try again on a later pass.
 */
import type { KubeApiClient, PersistentVolumeMeta } from '../kube/api-client.js';
import { pointerToken, type JsonPatchOp } from '../kube/json-patch.js';

export const ATTACH_LOCK_ANNOTATION = 'fleet-attach.io/attach-lock';
export const LOCK_BUCKET_LABEL = 'fleet-attach.io/lock-bucket';

/** What a taker writes beside its node: its node's bucket and the bucket epoch it acts under. */
export interface LockFence {
  bucket: number;
  epoch: number;
}

/** The node a lock names; `epoch` is absent when the value is not in the canonical form. */
export interface LockHolder {
  node: string;
  epoch?: number;
}

export type TakeOutcome =
  | { outcome: 'taken' }
  | { outcome: 'already-held'; holder: LockHolder }
  | { outcome: 'held-by'; holder: LockHolder }
  | { outcome: 'conflict' }
  | { outcome: 'not-found' };

export type ReleaseOutcome =
  | { outcome: 'released' }
  | { outcome: 'not-held' }
  | { outcome: 'held-by'; holder: LockHolder }
  | { outcome: 'conflict' }
  | { outcome: 'not-found' };

export interface VolumeLock {
  /**
   * Makes `node` the holder of `pv`'s lock. `taken`: this call wrote it; `already-held`: it
   * named `node` already (nothing written, whatever epoch it carries); `held-by`: another node
   * holds it (refused); `not-found`: no such PV; `conflict`: every attempt lost a race.
   */
  take(pv: string, node: string, fence: LockFence): Promise<TakeOutcome>;
  /**
   * Clears `pv`'s lock if it names `node`. `not-held`: there is no lock (nothing written);
   * `held-by`: it names another node (refused, nothing written).
   */
  release(pv: string, node: string): Promise<ReleaseOutcome>;
}

export type VolumeLockApi = Pick<KubeApiClient, 'getPersistentVolume' | 'patchPersistentVolume'>;

export interface VolumeLockDeps {
  api: VolumeLockApi;
  /** Reads and writes per call before answering `conflict` (default 3). */
  maxAttempts?: number;
}

/** The annotation value: `node=<node>,epoch=<epoch>` (node names are DNS subdomains: no `,` or `=`). */
export function lockValue(node: string, epoch: number): string {
  return `node=${node},epoch=${epoch}`;
}

const CANONICAL = /^node=([^,=]+),epoch=(\d+)$/;

/**
 * The holder an annotation value names; undefined when the value is empty (no lock). A value
 * not in the canonical form is read as naming the node spelled by the whole value, so that a
 * lock written by hand (`kubectl annotate … attach-lock=node-a`) still holds.
 */
export function parseLockValue(value: string | undefined): LockHolder | undefined {
  if (value === undefined || value === '') return undefined;
  const m = CANONICAL.exec(value);
  return m ? { node: m[1]!, epoch: Number(m[2]) } : { node: value };
}

export function createVolumeLock(deps: VolumeLockDeps): VolumeLock {
  return new PvAnnotationLock(deps.api, deps.maxAttempts ?? 3);
}

const LOCK_PATH = `/metadata/annotations/${pointerToken(ATTACH_LOCK_ANNOTATION)}`;
const BUCKET_PATH = `/metadata/labels/${pointerToken(LOCK_BUCKET_LABEL)}`;

class PvAnnotationLock implements VolumeLock {
  constructor(
    private readonly api: VolumeLockApi,
    private readonly maxAttempts: number,
  ) {}

  async take(pv: string, node: string, fence: LockFence): Promise<TakeOutcome> {
    for (let attempt = 0; attempt < this.maxAttempts; attempt++) {
      const meta = await this.api.getPersistentVolume(pv);
      if (meta === undefined) return { outcome: 'not-found' };
      const holder = parseLockValue(meta.annotations?.[ATTACH_LOCK_ANNOTATION]);
      if (holder?.node === node) return { outcome: 'already-held', holder };
      if (holder !== undefined) return { outcome: 'held-by', holder };
      const written = await this.api.patchPersistentVolume(pv, takeOps(meta, node, fence));
      if (written === 'patched') return { outcome: 'taken' };
      if (written === 'not-found') return { outcome: 'not-found' };
    }
    return { outcome: 'conflict' };
  }

  async release(pv: string, node: string): Promise<ReleaseOutcome> {
    for (let attempt = 0; attempt < this.maxAttempts; attempt++) {
      const meta = await this.api.getPersistentVolume(pv);
      if (meta === undefined) return { outcome: 'not-found' };
      const value = meta.annotations?.[ATTACH_LOCK_ANNOTATION];
      const holder = parseLockValue(value);
      if (holder === undefined) return { outcome: 'not-held' };
      if (holder.node !== node) return { outcome: 'held-by', holder };
      const written = await this.api.patchPersistentVolume(pv, releaseOps(meta, value!));
      if (written === 'patched') return { outcome: 'released' };
      if (written === 'not-found') return { outcome: 'not-found' };
    }
    return { outcome: 'conflict' };
  }
}

/**
 * Taking a free lock: there is no value to `test` (a `test` of a missing annotation fails when
 * the PV has no annotations at all), so the write is conditioned on the whole PV as read, by a
 * `test` of its resourceVersion. That condition also keeps an `add` of a whole map (a PV with no
 * annotations or no labels) from overwriting a map another writer created since the read.
 * Takes are rare (one per ReadWriteOnce attach), so a retry after an unrelated PV write is cheap.
 */
function takeOps(meta: PersistentVolumeMeta, node: string, fence: LockFence): JsonPatchOp[] {
  const value = lockValue(node, fence.epoch);
  const bucket = String(fence.bucket);
  return [
    { op: 'test', path: '/metadata/resourceVersion', value: meta.resourceVersion },
    meta.annotations === undefined
      ? { op: 'add', path: '/metadata/annotations', value: { [ATTACH_LOCK_ANNOTATION]: value } }
      : { op: 'add', path: LOCK_PATH, value },
    meta.labels === undefined
      ? { op: 'add', path: '/metadata/labels', value: { [LOCK_BUCKET_LABEL]: bucket } }
      : { op: 'add', path: BUCKET_PATH, value: bucket },
  ];
}

/**
 * Releasing: a field-level compare-and-swap on the lock value as read (other writes to the PV
 * do not upset it); the bucket label goes with it when it was there (a `remove` of a label
 * that has gone since fails the patch, which is then retried from a fresh read).
 */
function releaseOps(meta: PersistentVolumeMeta, value: string): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [
    { op: 'test', path: LOCK_PATH, value },
    { op: 'remove', path: LOCK_PATH },
  ];
  if (meta.labels?.[LOCK_BUCKET_LABEL] !== undefined) ops.push({ op: 'remove', path: BUCKET_PATH });
  return ops;
}

/** An in-memory VolumeLock for the controller's tests: atomic, so never `conflict` unless asked. */
export interface FakeVolumeLock extends VolumeLock {
  /** Every call, in order. */
  readonly calls: Array<{ method: 'take' | 'release'; pv: string; node: string; fence?: LockFence }>;
  /** The lock of `pv` as stored, with the bucket it was taken for. */
  holderOf(pv: string): (LockHolder & { bucket?: number }) | undefined;
  /** Sets or clears a lock directly (another replica's write). */
  setHolder(pv: string, holder: (LockHolder & { bucket?: number }) | undefined): void;
  /** PVs that do not exist: their calls answer `not-found`. */
  readonly missing: Set<string>;
  /** The next `times` calls answer `conflict` without a change. */
  conflictNext(times?: number): void;
}

function publicHolder(held: LockHolder): LockHolder {
  return held.epoch === undefined ? { node: held.node } : { node: held.node, epoch: held.epoch };
}

export function createFakeVolumeLock(): FakeVolumeLock {
  const locks = new Map<string, LockHolder & { bucket?: number }>();
  const missing = new Set<string>();
  const calls: FakeVolumeLock['calls'] = [];
  let conflicts = 0;
  const refused = (pv: string): { outcome: 'conflict' } | { outcome: 'not-found' } | undefined => {
    if (conflicts > 0) {
      conflicts--;
      return { outcome: 'conflict' };
    }
    return missing.has(pv) ? { outcome: 'not-found' } : undefined;
  };
  return {
    calls,
    missing,
    async take(pv, node, fence) {
      calls.push({ method: 'take', pv, node, fence: { ...fence } });
      const no = refused(pv);
      if (no) return no;
      const held = locks.get(pv);
      if (held?.node === node) return { outcome: 'already-held', holder: publicHolder(held) };
      if (held) return { outcome: 'held-by', holder: publicHolder(held) };
      locks.set(pv, { node, epoch: fence.epoch, bucket: fence.bucket });
      return { outcome: 'taken' };
    },
    async release(pv, node) {
      calls.push({ method: 'release', pv, node });
      const no = refused(pv);
      if (no) return no;
      const held = locks.get(pv);
      if (!held) return { outcome: 'not-held' };
      if (held.node !== node) return { outcome: 'held-by', holder: publicHolder(held) };
      locks.delete(pv);
      return { outcome: 'released' };
    },
    holderOf: (pv) => {
      const held = locks.get(pv);
      return held && { ...held };
    },
    setHolder(pv, holder) {
      if (holder) locks.set(pv, { ...holder });
      else locks.delete(pv);
    },
    conflictNext(times = 1) {
      conflicts += times;
    },
  };
}
