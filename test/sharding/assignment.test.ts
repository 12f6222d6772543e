import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { assignTargets } from '../../src/sharding/assignment.js';

const B = 1024;
const memberName = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);
const memberSet = (min: number, max: number) => fc.uniqueArray(memberName, { minLength: min, maxLength: max });

function counts(targets: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of targets) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
}

describe('rendezvous assignment', () => {
  it('gives every bucket exactly one target among the members, whatever their order or repeats', () => {
    fc.assert(
      fc.property(memberSet(1, 12), fc.integer({ min: 1, max: 2048 }), (members, buckets) => {
        const t = assignTargets(members, buckets);
        assert.equal(t.length, buckets);
        assert.ok(t.every((x) => members.includes(x)));
        assert.deepEqual(assignTargets([...members].reverse().concat(members), buckets), t);
      }),
      { numRuns: 100 },
    );
    assert.deepEqual(assignTargets([], 3), ['', '', '']);
  });

  it('removing a member moves only its buckets', () => {
    fc.assert(
      fc.property(memberSet(2, 12), fc.nat(), (members, pick) => {
        const gone = members[pick % members.length] as string;
        const before = assignTargets(members, B);
        const after = assignTargets(members.filter((m) => m !== gone), B);
        for (let b = 0; b < B; b++) {
          if (before[b] !== gone) assert.equal(after[b], before[b], `bucket ${b} moved between survivors`);
          else assert.notEqual(after[b], gone);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('adding a member moves buckets only to it, about 1/N of them', () => {
    fc.assert(
      fc.property(memberSet(2, 16), (all) => {
        const [joiner, ...members] = all as [string, ...string[]];
        const before = assignTargets(members, B);
        const after = assignTargets(all, B);
        let moved = 0;
        for (let b = 0; b < B; b++) {
          if (after[b] === before[b]) continue;
          assert.equal(after[b], joiner, `bucket ${b} moved to an old member`);
          moved++;
        }
        // Moved ~ Binomial(B, 1/N): 1/N ± 6σ, σ = √(B·p·(1−p)) (≤ 16 buckets).
        const n = all.length;
        const p = 1 / n;
        const sigma = Math.sqrt(B * p * (1 - p));
        assert.ok(Math.abs(moved - B * p) <= 6 * sigma, `N=${n}: ${moved} moved, expected ≈ ${(B * p).toFixed(0)}`);
      }),
      { numRuns: 60 },
    );
  });

  it('balances 1,024 buckets: no member holds more than the mean + 4σ for N ≤ 16', () => {
    // A member's load is ~Binomial(1024, 1/N); exceeding 4σ has probability ≈ 3·10⁻⁵ per member.
    for (let n = 2; n <= 16; n++) {
      const members = Array.from({ length: n }, (_, i) => `fleet-attach-${i}-${(i * 7919).toString(36)}`);
      const c = counts(assignTargets(members, B));
      assert.equal(c.size, n, `every member gets buckets at N=${n}`);
      const mean = B / n;
      const max = Math.max(...c.values());
      assert.ok(max <= mean + 4 * Math.sqrt(mean * (1 - 1 / n)), `N=${n}: max ${max}, mean ${mean.toFixed(1)}`);
    }
  });
});
