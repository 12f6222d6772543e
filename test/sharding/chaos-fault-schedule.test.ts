/**
 * The scale-out bench's fault schedule: a pure function of the seed, at least 50 faults of
 * which at least 20 kills in the main mix, the replica count kept within its bounds, and the
 * lasting faults 2–3 lease durations long.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { faultSchedule, MAIN_MIX, type FaultScheduleOptions } from '../../bench/lib/scale-out/fault-schedule.js';
import { createTakeoverTimer } from '../../bench/lib/scale-out/takeover-timer.js';

const opts = (seed: number): FaultScheduleOptions => ({ seed, mix: MAIN_MIX, initialReplicas: 3, minReplicas: 2, maxReplicas: 4, leaseDurationMs: 3000 });

describe('scale-out fault schedule', () => {
  it('replays the same faults for the same seed, and others for another seed', () => {
    assert.deepEqual(faultSchedule(opts(42)), faultSchedule(opts(42)));
    assert.notDeepEqual(faultSchedule(opts(42)), faultSchedule(opts(43)));
  });

  it('holds at least 50 faults, at least 20 kills, in bounds, for any seed', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 0xffffffff }), (seed) => {
      const s = faultSchedule(opts(seed));
      assert.ok(s.length >= 50);
      assert.ok(s.filter((f) => f.kind === 'kill').length >= 20);
      let replicas = 3;
      let last = -1;
      for (const f of s) {
        assert.ok(f.atMs > last, 'strictly later than the previous fault');
        last = f.atMs;
        replicas += f.kind === 'scale-up' ? 1 : f.kind === 'scale-down' ? -1 : 0;
        assert.equal(f.replicasAfter, replicas);
        assert.ok(replicas >= 2 && replicas <= 4);
        if (f.durationMs !== undefined) assert.ok(f.durationMs >= 6000 && f.durationMs <= 9000);
        assert.equal(f.durationMs !== undefined, ['pause', 'zombie', 'partition', 'lag'].includes(f.kind));
      }
    }), { numRuns: 50 });
  });
});

describe('scale-out takeover timer', () => {
  it('times a kill to the last bucket held by another replica and to the first write by a new holder', () => {
    const t = createTakeoverTimer();
    t.begin('kill', 'r1', [1, 2], 1000);
    t.onHolder(1, 'r2', 3000);
    t.onWrite('r1', 2, 3500); // the victim's own (zombie) write does not count
    t.onHolder(2, '', 4000); // freed, not yet taken
    assert.equal(t.takeovers()[0]!.claimS, null);
    t.onHolder(2, 'r3', 5500);
    t.onWrite('r3', 2, 6000);
    assert.deepEqual(t.takeovers(), [{ kind: 'kill', victim: 'r1', buckets: 2, claimS: 4.5, firstWriteS: 5 }]);
  });

  it('times a joining replica to its first bucket and to its whole share', () => {
    const t = createTakeoverTimer();
    t.joined('r4', [3, 5], 0);
    t.onHolder(3, 'r4', 12_000);
    t.onHolder(5, 'r4', 12_500);
    assert.deepEqual(t.joins(), [{ id: 'r4', share: 2, firstBucketS: 12, shareS: 12.5, handoverS: 0.5 }]);
  });
});
