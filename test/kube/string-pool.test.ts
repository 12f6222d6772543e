import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StringPool } from '../../src/kube/projections/string-pool.js';
import { flatCopy } from '../../src/cache/flat-copy.js';

/** Two equal strings that are distinct objects (JSON.parse makes a new string per occurrence). */
const twins = (s: string) => JSON.parse(JSON.stringify([s, s])) as [string, string];

describe('StringPool', () => {
  it('returns the first copy of an equal value', () => {
    const pool = new StringPool();
    const [a, b] = twins('sim.csi.fleet-attach.io');
    assert.equal(pool.string(a), a);
    assert.equal(pool.string(b), 'sim.csi.fleet-attach.io');
    assert.equal(pool.size, 1);
  });

  it('shares one frozen list per distinct list, and never confuses lists whose values contain the separator', () => {
    const pool = new StringPool();
    const rwo = pool.list(['ReadWriteOnce']);
    assert.equal(pool.list(['ReadWriteOnce']), rwo);
    assert.ok(Object.isFrozen(rwo));
    const two = pool.list(['a', 'b']);
    assert.deepEqual(two, ['a', 'b']);
    // One value holding the separator must not come back as the two-value list, nor replace it wrongly.
    const one = pool.list(['a\u0000b']);
    assert.deepEqual(one, ['a\u0000b']);
    assert.deepEqual(pool.list(['a', 'b']), ['a', 'b']);
    assert.equal(pool.list([]).length, 0);
  });

  it('is bounded: a full pool starts over and still answers equal values', () => {
    const pool = new StringPool(4);
    for (let i = 0; i < 10; i++) assert.equal(pool.string(`v${i}`), `v${i}`);
    assert.ok(pool.size <= 4);
  });
});

describe('flatCopy', () => {
  it('keeps the content of ropes, long and short, and strings with lone surrogates', () => {
    const rope = ['kubernetes.io/csi', 'ebs.csi.aws.com'].join('/') + '^' + 'vol-0123456789abcdef';
    assert.equal(flatCopy(rope), rope);
    assert.equal(flatCopy('short'), 'short');
    const surrogate = 'volume-handle-\ud800-with-a-lone-surrogate';
    assert.equal(flatCopy(surrogate), surrogate);
    assert.equal(flatCopy('ünïcödé volume handle ✓ long enough'), 'ünïcödé volume handle ✓ long enough');
  });
});
