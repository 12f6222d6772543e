/**
 * The committed-write log: every change the store commits, in commit order, with who made it,
 * for a checker that verifies fenced writers from outside (in-process through `since`, from
 * another process over the API server's `/debug/write-log`).
 *
 * Contract:
 * - A record per committed change (create, update, patch, delete, of a resource or its status;
 *   a no-op write commits nothing and leaves none), with the change's resourceVersion. Records
 *   are in resourceVersion order; every commit after the log was created has one, until the
 *   ring overwrites the oldest.
 * - The user is the authenticated user of the API request that made the change, with its
 *   verb; changes the simulator's own actors make carry {@link SIMULATOR_USER} and the verb
 *   their event implies.
 * - Refused writes (4xx) leave no record; they are counted per user and status code.
 *
 * Compact: fixed-width columns in typed arrays and the object names in one byte ring, so a
 * million records cost some 70 MB outside the JS heap and no object each.
 */
import type { ResourceName, ServableStore, StoreEventType } from '../store/index.js';
import { RESOURCE_NAMES, RESOURCES } from '../store/index.js';
import type { ApiVerb } from './faults.js';

/** The user of changes no API request made (the simulator's actors). */
export const SIMULATOR_USER = 'system:simulator';

export type WriteVerb = Extract<ApiVerb, 'create' | 'update' | 'patch' | 'delete' | 'deletecollection'>;

export interface WriteRecord {
  rv: number;
  type: StoreEventType;
  verb: WriteVerb;
  resource: ResourceName;
  namespace?: string;
  name: string;
  subresource?: 'status';
  user: string;
}

export interface WriteLogOptions {
  store: ServableStore;
  /** Records kept (default 1,000,000); the oldest are overwritten. */
  capacity?: number;
  /** Bytes of object names kept per record on average (default 48); past them the oldest records go too. */
  nameBytesPerRecord?: number;
}

export interface WriteLog {
  /**
   * Runs `fn`, a synchronous store write, as `user` with `verb`: the commit it makes is recorded
   * as theirs (the API server, around each write it serves).
   */
  attribute<T>(user: string, verb: WriteVerb, subresource: 'status' | undefined, fn: () => T): T;
  /** Records with a resourceVersion above `rv`, oldest first (at most `limit`). */
  since(rv: number, limit?: number): WriteRecord[];
  /** Records held. */
  size(): number;
  /** The resourceVersion of the oldest record held, or undefined when empty. */
  oldestRv(): number | undefined;
  /** Records overwritten since start. */
  dropped(): number;
  /** Counts a write the API server refused. */
  refused(user: string, code: number): void;
  /** Refused writes by user, then by status code. */
  refusals(): Record<string, Record<string, number>>;
  /** Stops recording. */
  close(): void;
}

const TYPES: readonly StoreEventType[] = ['ADDED', 'MODIFIED', 'DELETED'];
const VERBS: readonly WriteVerb[] = ['create', 'update', 'patch', 'delete', 'deletecollection'];
const IMPLIED_VERB: Record<StoreEventType, WriteVerb> = { ADDED: 'create', MODIFIED: 'update', DELETED: 'delete' };

export function createWriteLog(opts: WriteLogOptions): WriteLog {
  const cap = Math.max(1, opts.capacity ?? 1_000_000);
  const arenaBytes = Math.max(4096, cap * (opts.nameBytesPerRecord ?? 48));
  const rvs = new Float64Array(cap);
  const nameAt = new Float64Array(cap); // logical offset into the name ring
  const nameLen = new Uint16Array(cap);
  const users = new Uint16Array(cap);
  const kinds = new Uint8Array(cap * 4); // type, verb, resource, subresource
  const arena = Buffer.allocUnsafe(arenaBytes);
  let head = 0; // next slot
  let count = 0;
  let bytePos = 0; // logical end of the name ring
  let droppedCount = 0;
  const userNames: string[] = [SIMULATOR_USER];
  const userIds = new Map<string, number>([[SIMULATOR_USER, 0]]);
  const refusedBy = new Map<string, Map<number, number>>();
  let pending: { user: number; verb: number; status: boolean } | undefined;

  const userId = (name: string): number => {
    let id = userIds.get(name);
    if (id === undefined) {
      if (userNames.length >= 0xffff) return 0;
      id = userNames.length;
      userNames.push(name);
      userIds.set(name, id);
    }
    return id;
  };
  const oldestSlot = () => (head - count + cap) % cap;
  const dropOldest = () => {
    count--;
    droppedCount++;
  };

  function record(rv: number, type: StoreEventType, resource: ResourceName, namespace: string | undefined, name: string): void {
    const who = pending;
    pending = undefined; // one request's store call commits one change; later ones are the actors' reactions
    const key = namespace === undefined ? name : `${namespace}/${name}`;
    const len = Buffer.byteLength(key);
    if (bytePos % arenaBytes + len > arenaBytes) bytePos += arenaBytes - (bytePos % arenaBytes);
    while (count > 0 && nameAt[oldestSlot()] < bytePos + len - arenaBytes) dropOldest();
    if (count === cap) dropOldest();
    const slot = head;
    arena.write(key, bytePos % arenaBytes, 'utf8');
    rvs[slot] = rv;
    nameAt[slot] = bytePos;
    nameLen[slot] = len;
    users[slot] = who ? who.user : 0;
    kinds[slot * 4] = TYPES.indexOf(type);
    kinds[slot * 4 + 1] = VERBS.indexOf(who ? VERBS[who.verb] : IMPLIED_VERB[type]);
    kinds[slot * 4 + 2] = RESOURCE_NAMES.indexOf(resource);
    kinds[slot * 4 + 3] = who?.status ? 1 : 0;
    bytePos += len;
    head = (head + 1) % cap;
    count++;
  }

  function read(slot: number): WriteRecord {
    const resource = RESOURCE_NAMES[kinds[slot * 4 + 2]];
    const at = nameAt[slot] % arenaBytes;
    const key = arena.toString('utf8', at, at + nameLen[slot]);
    const cut = RESOURCES[resource].namespaced ? key.indexOf('/') : -1;
    const rec: WriteRecord = {
      rv: rvs[slot],
      type: TYPES[kinds[slot * 4]],
      verb: VERBS[kinds[slot * 4 + 1]],
      resource,
      ...(cut >= 0 ? { namespace: key.slice(0, cut) } : {}),
      name: cut >= 0 ? key.slice(cut + 1) : key,
      user: userNames[users[slot]],
    };
    if (kinds[slot * 4 + 3] === 1) rec.subresource = 'status';
    return rec;
  }

  /** Index (0 = oldest) of the first record above `rv`: records are in resourceVersion order. */
  function firstAbove(rv: number): number {
    let lo = 0;
    let hi = count;
    const base = oldestSlot();
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (rvs[(base + mid) % cap] > rv) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  const unsubscribe = opts.store.subscribe((ev) => record(ev.rv, ev.type, ev.resource, ev.namespace, ev.name));

  return {
    attribute(user, verb, subresource, fn) {
      pending = { user: userId(user), verb: VERBS.indexOf(verb), status: subresource === 'status' };
      try {
        return fn();
      } finally {
        pending = undefined;
      }
    },
    since(rv, limit = Infinity) {
      const out: WriteRecord[] = [];
      const base = oldestSlot();
      for (let i = firstAbove(rv); i < count && out.length < limit; i++) out.push(read((base + i) % cap));
      return out;
    },
    size: () => count,
    oldestRv: () => (count === 0 ? undefined : rvs[oldestSlot()]),
    dropped: () => droppedCount,
    refused(user, code) {
      let byCode = refusedBy.get(user);
      if (!byCode) refusedBy.set(user, (byCode = new Map()));
      byCode.set(code, (byCode.get(code) ?? 0) + 1);
    },
    refusals() {
      const out: Record<string, Record<string, number>> = {};
      for (const [user, byCode] of refusedBy) out[user] = Object.fromEntries([...byCode].map(([c, n]) => [String(c), n]));
      return out;
    },
    close: unsubscribe,
  };
}
