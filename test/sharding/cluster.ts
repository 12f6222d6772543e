/**
 * Several replicas (membership + coordinator) over one in-memory Lease store, on one monotonic
 * clock the test moves. `step()` advances the clock by a retry period and lets every running
 * replica renew/observe and then make one pass, checking the ownership invariant after each
 * replica's move: no bucket may act on two replicas (paused ones included, since their clock
 * runs on), and a bucket acts only on the replica the stored Lease names, at the stored epoch.
 */
import assert from 'node:assert/strict';
import type { LeaseRecord } from '../../src/kube/api-client.js';
import { createBucketLeases, createMembership, createShardCoordinator, type Membership, type ShardCoordinator, type ShardLeaseApi } from '../../src/sharding/index.js';
import { createFakeLeaseApi, type FakeLeaseApi } from '../../src/sharding/fake-lease-api.js';

export const NS = 'kube-system';
export const TIMING = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200, graceMs: 500, stableMs: 600 };

export interface Replica {
  id: string;
  m: Membership;
  c: ShardCoordinator;
  /** Not stepped while true (a stopped process: SIGSTOP). */
  paused: boolean;
  stopped: boolean;
  /** Its API calls are refused (a network partition). */
  down: boolean;
  /** Bucket Lease writes this replica sent, in order. */
  bucketWrites: Array<{ verb: string; name: string; holder: string }>;
  /** Bucket Lease writes on the wire now, and the most at once. */
  writesInFlight: { now: number; max: number };
  /** Its own clock when given one (else the cluster's). */
  clock?: { t: number };
}

export interface Cluster {
  store: FakeLeaseApi;
  replicas: Replica[];
  now(): number;
  /** Events of every replica in order: `<id> drain|released|warm|acting|idle <b>`. */
  events: string[];
  add(id: string, o?: { ownClock?: boolean; api?: (api: ShardLeaseApi) => ShardLeaseApi }): Replica;
  step(ms?: number): Promise<void>;
  /** Steps until `cond` holds; fails after `max` steps. Returns the steps taken. */
  stepUntil(what: string, cond: () => boolean, max?: number): Promise<number>;
  check(): void;
  holder(b: number): LeaseRecord | undefined;
  /** Every bucket acts on a running replica. */
  partitioned(): boolean;
  /** The running replica acting on bucket b. */
  ownerOf(b: number): Replica | undefined;
}

export function createCluster(buckets: number): Cluster {
  const store = createFakeLeaseApi();
  const names = createBucketLeases({ api: store, namespace: NS, buckets });
  let t = 0;
  const replicas: Replica[] = [];
  const events: string[] = [];
  const violations: string[] = [];
  const flush = async () => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  const running = () => replicas.filter((r) => !r.paused && !r.stopped);
  const cluster: Cluster = {
    store,
    replicas,
    events,
    now: () => t,
    add(id, o = {}) {
      const bucketWrites: Replica['bucketWrites'] = [];
      const r = { id, paused: false, stopped: false, down: false, bucketWrites, writesInFlight: { now: 0, max: 0 } } as Replica;
      const inner: ShardLeaseApi = o.api ? o.api(store) : store;
      const refused = () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      const base: ShardLeaseApi = {
        getLease: (...a) => (r.down ? refused() : inner.getLease(...a)),
        createLease: (...a) => (r.down ? refused() : inner.createLease(...a)),
        updateLease: (...a) => (r.down ? refused() : inner.updateLease(...a)),
        listLeases: (...a) => (r.down ? refused() : inner.listLeases(...a)),
      };
      const bucketWrite = async (verb: 'create' | 'update', l: LeaseRecord, send: () => Promise<LeaseRecord>): Promise<LeaseRecord> => {
        if (!l.name.startsWith('fleet-attach-b-')) return send();
        bucketWrites.push({ verb, name: l.name, holder: l.holderIdentity });
        r.writesInFlight.max = Math.max(r.writesInFlight.max, ++r.writesInFlight.now);
        try {
          const out = await send();
          if (l.holderIdentity === '') events.push(`${id} released ${names.bucketOf(l.name)}`);
          return out;
        } finally {
          r.writesInFlight.now--;
        }
      };
      const api: ShardLeaseApi = {
        getLease: (ns, n, opts) => base.getLease(ns, n, opts),
        listLeases: (ns, sel, opts) => base.listLeases(ns, sel, opts),
        createLease: (l, opts) => bucketWrite('create', l, () => base.createLease(l, opts)),
        updateLease: (l, opts) => bucketWrite('update', l, () => base.updateLease(l, opts)),
      };
      const clock = o.ownClock ? { t } : undefined;
      const m = createMembership({ api, namespace: NS, identity: id, ...TIMING, now: clock ? () => clock.t : () => t });
      r.m = m;
      if (clock) r.clock = clock;
      r.c = createShardCoordinator({
        api,
        namespace: NS,
        membership: m,
        buckets,
        retryPeriodMs: TIMING.retryPeriodMs,
        maxConcurrentWrites: 8,
        drain: async (b) => {
          // Recorded, not thrown: the coordinator logs a failed drain and retries it.
          if (r.c.mayActOnBucket(b)) violations.push(`${id} still acts on bucket ${b} while draining it`);
          events.push(`${id} drain ${b}`);
        },
        warmUp: async (b) => {
          events.push(`${id} warm ${b}`);
        },
        onChange: (b, acting) => {
          events.push(`${id} ${acting ? 'acting' : 'idle'} ${b}`);
        },
      });
      replicas.push(r);
      return r;
    },
    async step(ms = TIMING.retryPeriodMs) {
      t += ms;
      for (const r of running()) if (r.clock) r.clock.t += ms;
      for (const r of running()) {
        await r.m.tick();
        cluster.check();
      }
      for (const r of running()) {
        await r.c.pass();
        await flush();
        cluster.check();
      }
    },
    async stepUntil(what, cond, max = 200) {
      for (let i = 0; i < max; i++) {
        if (cond()) return i;
        await cluster.step();
      }
      throw new Error(`not reached in ${max} steps: ${what}`);
    },
    check() {
      assert.deepEqual(violations, []);
      for (let b = 0; b < buckets; b++) {
        // A paused replica whose clock stands still is not counted: it runs nothing, and its
        // belief is only tested once it resumes (the data-level fences cover that window).
        const acting = replicas.filter((r) => !(r.paused && r.clock) && r.c.mayActOnBucket(b));
        assert.ok(acting.length <= 1, `bucket ${b} acts on ${acting.map((r) => r.id).join(' and ')} at t=${t}`);
        const r = acting[0];
        if (!r) continue;
        const rec = cluster.holder(b);
        assert.equal(rec?.holderIdentity, r.id, `bucket ${b} acts on ${r.id} but its Lease names ${rec?.holderIdentity}`);
        assert.equal(r.c.epoch(b), rec?.leaseTransitions, `bucket ${b}: epoch`);
      }
    },
    holder: (b) => store.get(NS, names.name(b)),
    ownerOf: (b) => replicas.find((r) => !r.paused && r.c.mayActOnBucket(b)),
    partitioned() {
      for (let b = 0; b < buckets; b++) if (!cluster.ownerOf(b)) return false;
      return true;
    },
  };
  return cluster;
}
