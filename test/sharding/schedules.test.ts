/**
 * Random schedules of steps, pauses, resumptions, partitions from the API, graceful stops and
 * joins over up to four replicas: one owner per bucket after every replica's move, and once the
 * faults end, the replicas still live partition all buckets on their targets.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { assignTargets } from '../../src/sharding/index.js';
import { createCluster } from './cluster.js';

const B = 32;

type Action =
  | { kind: 'step'; n: number }
  | { kind: 'pause' | 'resume' | 'down' | 'up' | 'stop'; who: number }
  | { kind: 'join' };

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('step' as const), n: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('pause' as const, 'resume' as const, 'down' as const, 'up' as const, 'stop' as const), who: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'join' as const }) },
);

describe('sharding under random schedules', () => {
  it('never lets two replicas act on one bucket, and converges once the faults end', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 5, maxLength: 30 }), async (actions) => {
        const c = createCluster(B);
        let joined = 0;
        const join = () => c.add(`r-${joined++}`);
        join();
        join();
        for (const a of actions) {
          const r = 'who' in a ? c.replicas[a.who % c.replicas.length] : undefined;
          if (a.kind === 'step') for (let i = 0; i < a.n; i++) await c.step();
          else if (a.kind === 'join' && c.replicas.filter((x) => !x.stopped).length < 4) join();
          else if (r && !r.stopped) {
            if (a.kind === 'pause') r.paused = true;
            else if (a.kind === 'resume') r.paused = false;
            else if (a.kind === 'down') r.down = true;
            else if (a.kind === 'up') r.down = false;
            else if (a.kind === 'stop' && !r.paused) {
              await r.c.stop();
              r.stopped = true;
              c.check();
            }
          }
        }
        for (const r of c.replicas) {
          r.paused = false;
          r.down = false;
        }
        // Whoever lost its membership stays out (the process would exit); everyone live converges.
        await c.step();
        const live = c.replicas.filter((r) => !r.stopped && r.m.lost() === undefined);
        if (live.length === 0) return;
        const targets = assignTargets(live.map((r) => r.id), B);
        await c.stepUntil('the live replicas own every bucket on its target', () => c.partitioned() && targets.every((t, b) => c.ownerOf(b)?.id === t), 100);
      }),
      { numRuns: 40 },
    );
  });
});
