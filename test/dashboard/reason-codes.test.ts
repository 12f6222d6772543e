import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REASONS, REASON_CODES, reasonOf, type ReasonCode } from '../../src/dashboard/reason-codes.js';
import { diagnose, waitingFor, type PairFacts } from '../../src/http/waiting-for.js';

const NOW = 10_000_000;
const OPTS = { maxWaitForUnmountMs: 360_000, disableForceDetachOnTimeout: false };

function facts(over: Partial<PairFacts>): PairFacts {
  return {
    node: 'node-7', healthy: true, outOfService: false, desired: false, attachState: 'attached', mounted: true,
    reportedAttached: true, detachRequestedAt: null, multiAttachForbidden: true, backoff: [], attachedElsewhere: [], ...over,
  };
}

const want = facts({ desired: true, attachState: 'detached', mounted: false, reportedAttached: false });
const gone = facts({ mounted: false, reportedAttached: false });

/** One set of facts per code, and the ETA expected (a number, or 'why'). */
const CASES: Record<ReasonCode, { f: PairFacts; options?: typeof OPTS; eta: number | 'why' }> = {
  'attach-running': { f: { ...want, pending: { op: 'attach', node: 'node-7', startedAt: NOW - 1000 } }, eta: 'why' },
  'attach-blocked-by-operation': { f: { ...want, pending: { op: 'detach', node: 'node-3', startedAt: NOW - 1000 } }, eta: 'why' },
  'multi-attach': { f: { ...want, attachedElsewhere: ['node-3'] }, eta: 'why' },
  'held-by-uncertain': { f: { ...want, uncertainElsewhere: ['node-3'] }, eta: 'why' },
  'attach-backoff': { f: { ...want, backoff: [{ op: 'attach', retryAt: NOW + 4000 }], lastError: { op: 'attach', message: 'boom' } }, eta: 4000 },
  'uncertain': { f: { ...want, attachState: 'uncertain' }, eta: 0 },
  'attach-next-pass': { f: want, eta: 0 },
  'not-reported': { f: { ...want, attachState: 'attached' }, eta: 'why' },
  'detach-running': { f: { ...gone, pending: { op: 'detach', node: 'node-7', startedAt: NOW - 1000 } }, eta: 'why' },
  'detach-blocked-by-operation': { f: { ...gone, pending: { op: 'attach', node: 'node-3', startedAt: NOW - 1000 } }, eta: 'why' },
  'detach-backoff': { f: { ...gone, backoff: [{ op: 'detach', retryAt: NOW + 2500 }] }, eta: 2500 },
  'mounted-node-healthy': { f: facts({}), eta: 'why' },
  'mounted-node-unhealthy': { f: facts({ healthy: false, detachRequestedAt: NOW - 60_000 }), eta: 300_001 },
  'mounted-force-disabled': { f: facts({ healthy: false }), options: { ...OPTS, disableForceDetachOnTimeout: true }, eta: 'why' },
  'force-detach-next-pass': { f: facts({ outOfService: true }), eta: 0 },
  'detach-status-write': { f: facts({ mounted: false }), eta: 0 },
  'detach-next-pass': { f: gone, eta: 0 },
  'operation-not-needed': { f: { ...gone, attachState: 'detached', pending: { op: 'attach', node: 'node-7', startedAt: NOW - 1000 } }, eta: 'why' },
};

describe('reason codes', () => {
  it('the vocabulary lists every code once, each with a side, a title and upstream rules', () => {
    assert.deepEqual(REASONS.map((r) => r.code), [...REASON_CODES]);
    for (const r of REASONS) {
      assert.ok(r.title.length > 0 && r.rule.length > 0, r.code);
      for (const rule of r.rule) assert.match(rule, /^[A-R]\d{1,2}$/, r.code);
    }
  });

  for (const code of REASON_CODES) {
    it(`${code} is reached from facts, with the waitingFor sentence and an ETA`, () => {
      const c = CASES[code];
      const d = diagnose(c.f, NOW, c.options ?? OPTS);
      assert.ok(d, code);
      assert.equal(d.reason, code);
      assert.equal(d.sentence, waitingFor(c.f, NOW, c.options ?? OPTS));
      assert.equal(reasonOf(code).side, d.sentence.startsWith('attach to') ? 'attach' : 'detach', d.sentence);
      if (c.eta === 'why') {
        assert.equal(d.etaMs, undefined);
        assert.ok(d.etaWhy && d.etaWhy.length > 0);
      } else {
        assert.equal(d.etaMs, c.eta);
        assert.equal(d.etaWhy, undefined);
      }
    });
  }

  it('a settled pair has no diagnosis', () => {
    assert.equal(diagnose(facts({ desired: true }), NOW, OPTS), undefined);
    assert.equal(diagnose(facts({ attachState: 'detached' }), NOW, OPTS), undefined);
  });
});
