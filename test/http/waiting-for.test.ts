import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDuration, waitingFor, type PairFacts } from '../../src/http/waiting-for.js';

const NOW = 10_000_000;
const OPTS = { maxWaitForUnmountMs: 360_000, disableForceDetachOnTimeout: false };

function facts(over: Partial<PairFacts>): PairFacts {
  return {
    node: 'node-7', healthy: true, outOfService: false, desired: false, attachState: 'attached', mounted: true,
    reportedAttached: true, detachRequestedAt: null, multiAttachForbidden: true, backoff: [], attachedElsewhere: [], ...over,
  };
}

describe('waitingFor', () => {
  it('is silent for settled pairs', () => {
    assert.equal(waitingFor(facts({ desired: true }), NOW, OPTS), undefined);
    assert.equal(waitingFor(facts({ attachState: 'detached' }), NOW, OPTS), undefined);
  });

  it('F6: a mounted volume on a healthy node is never forced off', () => {
    const f = facts({ detachRequestedAt: NOW - 3_600_000 });
    assert.equal(waitingFor(f, NOW, OPTS), 'detach from node-7: still mounted, node healthy, will not force');
  });

  it('F4-F6: on an unhealthy node the timer counts down to a forced detach', () => {
    const unhealthy = facts({ healthy: false });
    assert.equal(waitingFor(unhealthy, NOW, OPTS), 'detach from node-7: still mounted, node unhealthy, force detach 6m00s after the next pass starts the timer');
    assert.equal(waitingFor({ ...unhealthy, detachRequestedAt: NOW - 60_000 }, NOW, OPTS), 'detach from node-7: still mounted, node unhealthy, force detach in 5m00s');
    // Expiry is strictly elapsed > maxWait.
    assert.match(waitingFor({ ...unhealthy, detachRequestedAt: NOW - 360_000 }, NOW, OPTS) ?? '', /force detach in 1ms$/);
    assert.equal(waitingFor({ ...unhealthy, detachRequestedAt: NOW - 360_001 }, NOW, OPTS),
      'detach from node-7: still mounted, node unhealthy for over 6m00s (forced), detach starts on the next pass, after removing it from node status');
  });

  it('P2: with force detach on timeout disabled only unmount or the taint helps', () => {
    const f = facts({ healthy: false, detachRequestedAt: NOW - 3_600_000 });
    assert.equal(waitingFor(f, NOW, { ...OPTS, disableForceDetachOnTimeout: true }),
      'detach from node-7: still mounted, node unhealthy, force detach on timeout disabled; waiting for unmount or the out-of-service taint');
  });

  it('F5/F7: the out-of-service taint forces, an unmounted volume goes at once', () => {
    assert.equal(waitingFor(facts({ outOfService: true, reportedAttached: false }), NOW, OPTS), 'detach from node-7: node out of service (forced), detach starts on the next pass');
    assert.equal(waitingFor(facts({ mounted: false, attachState: 'uncertain', reportedAttached: false }), NOW, OPTS), 'detach from node-7: not mounted, detach starts on the next pass');
  });

  it('F2 / I3: pending operations and backoff windows come first', () => {
    const pending = { op: 'detach' as const, node: 'node-7', startedAt: NOW - 12_000 };
    assert.equal(waitingFor(facts({ pending }), NOW, OPTS), 'detach from node-7: detach in progress for 12s');
    const backoff = [{ op: 'detach' as const, retryAt: NOW + 4000 }];
    assert.equal(waitingFor(facts({ mounted: false, backoff, lastError: { op: 'detach', message: 'timed out' } }), NOW, OPTS),
      'detach from node-7: last detach failed: timed out; retry in 4s');
    // An attach backoff does not delay a detach (I3: per operation name).
    assert.equal(waitingFor(facts({ mounted: false, reportedAttached: false, backoff: [{ op: 'attach', retryAt: NOW + 4000 }] }), NOW, OPTS),
      'detach from node-7: not mounted, detach starts on the next pass');
  });

  it('G1/G3/G4: attach waits for the volume lane, for the holder, or for its backoff', () => {
    const want = facts({ desired: true, attachState: 'detached', mounted: false, reportedAttached: false });
    assert.equal(waitingFor(want, NOW, OPTS), 'attach to node-7: attach starts on the next pass');
    assert.equal(waitingFor({ ...want, pending: { op: 'detach', node: 'node-3', startedAt: NOW - 1500 } }, NOW, OPTS),
      'attach to node-7: waiting for the detach on node-3 to finish (multi-attach forbidden: one operation per volume at a time), running for 1.5s');
    assert.equal(waitingFor({ ...want, attachedElsewhere: ['node-3'] }, NOW, OPTS),
      'attach to node-7: attached to node-3 and multi-attach is forbidden, waiting for detach there');
    // Multi-attach allowed: another node's attachment does not block.
    assert.equal(waitingFor({ ...want, multiAttachForbidden: false, attachedElsewhere: ['node-3'] }, NOW, OPTS), 'attach to node-7: attach starts on the next pass');
    assert.equal(waitingFor({ ...want, attachState: 'uncertain', backoff: [{ op: 'attach', retryAt: NOW + 65_000 }] }, NOW, OPTS),
      'attach to node-7: last attach failed; retry in 1m05s');
    assert.equal(waitingFor({ ...want, attachState: 'uncertain' }, NOW, OPTS), 'attach to node-7: attachment uncertain, attach is retried on the next pass');
  });

  it('formats durations for humans', () => {
    assert.deepEqual([0, 999, 1000, 2500, 59_400, 60_000, 3_599_000, 7_500_000].map(formatDuration),
      ['0ms', '999ms', '1s', '2.5s', '59s', '1m00s', '59m59s', '2h5m']);
  });
});
