import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formatFaultSpec, parseFaultSpec, type FaultSpec } from '../../src/sim/faults/index.js';

describe('fault spec', () => {
  it('parses every kind with its options and defaults', () => {
    const s = parseFaultSpec(' drop-watch=30s, gone=0.01,error500=0.02,error429=0.02:retry-after=3,conflict-node-status=0.05,latency=5ms..50ms,attach-fail=0.1,detach-fail=0.05,slow-detach=5s,flap=0.5,delete-node=0.01:rejoin=1m,churn=20 ');
    assert.deepEqual(s, {
      dropWatchMs: 30_000,
      gone: 0.01,
      error500: { fraction: 0.02, committed: 0.5 },
      error429: { fraction: 0.02, retryAfterSeconds: 3 },
      conflictNodeStatus: 0.05,
      latency: { minMs: 5, maxMs: 50 },
      attachFail: 0.1,
      detachFail: 0.05,
      slowDetach: { ms: 5000, fraction: 1 },
      flap: { rate: 0.5, downMs: 3000 },
      deleteNode: { rate: 0.01, gcMs: 2000, rejoinMs: 60_000 },
      churn: 20,
    });
    assert.deepEqual(parseFaultSpec('latency=10ms').latency, { minMs: 10, maxMs: 10 });
    assert.deepEqual(parseFaultSpec('none'), {});
    assert.deepEqual(parseFaultSpec(''), {});
  });

  it('rejects bad items with a message naming them', () => {
    const cases: Array<[string, RegExp]> = [
      ['error500=2', /"error500=2".*fraction/],
      ['bogus=1', /unknown fault kind "bogus"/],
      ['latency=50ms..5ms', /MIN ≤ MAX/],
      ['drop-watch=soon', /not a duration/],
      ['flap=0.1:up=3s', /unknown option "up"/],
      ['gone=0.1,gone=0.2', /given twice/],
      ['gone', /KIND=VALUE/],
      ['gone=0.1,,flap=1', /empty item/],
      ['error429=0.1:retry-after=-1', /retry-after/],
      ['flap=-1', /not a rate/],
      ['drop-watch=0s', /above 0/],
    ];
    for (const [text, re] of cases) {
      assert.throws(() => parseFaultSpec(text), (err: Error & { code?: string }) => err.code === 'FA_ERR_FLAG_INVALID' && re.test(err.message), text);
    }
  });

  it('formats to a canonical text that parses back to the same spec', () => {
    const frac = fc.double({ min: 0, max: 1, noNaN: true });
    const dur = fc.integer({ min: 1, max: 3_600_000 });
    const spec: fc.Arbitrary<FaultSpec> = fc.record(
      {
        dropWatchMs: dur,
        gone: frac,
        error500: fc.record({ fraction: frac, committed: frac }),
        error429: fc.record({ fraction: frac, retryAfterSeconds: fc.integer({ min: 0, max: 3600 }) }),
        conflictNodeStatus: frac,
        latency: fc.tuple(fc.integer({ min: 0, max: 60_000 }), fc.integer({ min: 0, max: 60_000 })).map(([a, b]) => ({ minMs: Math.min(a, b), maxMs: Math.max(a, b) })),
        attachFail: frac,
        detachFail: frac,
        slowDetach: fc.record({ ms: dur, fraction: frac }),
        flap: fc.record({ rate: fc.double({ min: 0, max: 1000, noNaN: true }), downMs: dur }),
        deleteNode: fc.record({ rate: fc.double({ min: 0, max: 1000, noNaN: true }), gcMs: dur, rejoinMs: dur }),
        churn: fc.double({ min: 0, max: 1000, noNaN: true }),
      },
      { requiredKeys: [], noNullPrototype: true },
    );
    fc.assert(fc.property(spec, (s) => assert.deepEqual(parseFaultSpec(formatFaultSpec(s)), JSON.parse(JSON.stringify(s)))), { seed: 7, numRuns: 300 });
  });
});
