/**
 * The peer view's next expiry: the moment the membership loop wakes to fence, so that a crashed
 * member is fenced at lease duration + grace after its last observed renewal, not up to a retry
 * period later. Controlled clock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LeaseRecord } from '../../src/kube/projections/lease.js';
import { createPeerView } from '../../src/sharding/peer-view.js';

const LEASE = 3000;
const GRACE = 1000;
const rec = (holder: string, rv: string, seconds = 3): LeaseRecord => ({ namespace: 'ns', name: `m-${holder}`, holderIdentity: holder, leaseDurationSeconds: seconds, resourceVersion: rv, leaseTransitions: 0 });

describe('peer view: next expiry', () => {
  it('is lease + grace after the last observed change of each live peer, the earliest first, and never a moment already past', () => {
    const v = createPeerView({ leaseMs: LEASE, graceMs: GRACE, stableMs: 0 });
    assert.equal(v.nextExpiry(0), undefined, 'nobody seen');
    v.observe(new Map([['a', rec('a', '1')], ['b', rec('b', '1')]]), 0);
    assert.equal(v.nextExpiry(0), LEASE + GRACE);
    // b renews at 1,000: a still expires first, then b.
    v.observe(new Map([['a', rec('a', '1')], ['b', rec('b', '2')]]), 1000);
    assert.equal(v.nextExpiry(1000), LEASE + GRACE);
    assert.equal(v.nextExpiry(LEASE + GRACE), 1000 + LEASE + GRACE, 'a is expired at its moment: the next is b');
    assert.deepEqual(v.allExpired(LEASE + GRACE), ['a']);
    assert.equal(v.nextExpiry(1000 + LEASE + GRACE), undefined, 'both expired: nothing to wake for');
  });

  it('skips a fenced or released peer, uses the longer of the two lease durations, and counts an absent identity from when it was asked about', () => {
    const v = createPeerView({ leaseMs: LEASE, graceMs: GRACE, stableMs: 0 });
    v.observe(new Map([['a', rec('a', '1', 10)], ['b', rec('fenced-by-c', '1')], ['c', rec('', '1')]]), 0);
    assert.equal(v.nextExpiry(0), 10_000 + GRACE, 'its own 10 s lease, not our 3 s');
    assert.equal(v.isGone('d', 500), false);
    assert.equal(v.nextExpiry(500), 500 + LEASE + GRACE, 'the absent d, asked about at 500');
  });
});
