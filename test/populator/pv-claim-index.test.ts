import assert from 'node:assert/strict';
import { it } from 'node:test';
import { PvClaimIndex } from '../../src/populator/pv-claim-index.js';

it('PvClaimIndex: claims by the PV they name; rebinding moves, unbinding and deleting remove', () => {
  const ix = new PvClaimIndex();
  ix.set('ns/a', 'pv-1');
  ix.set('ns/b', 'pv-1');
  ix.set('ns/c', '');
  assert.deepEqual([...ix.claimsOfPv('pv-1')].sort(), ['ns/a', 'ns/b']);
  assert.equal(ix.size, 2);
  ix.set('ns/a', 'pv-2');
  assert.deepEqual(ix.claimsOfPv('pv-1'), ['ns/b']);
  assert.deepEqual(ix.claimsOfPv('pv-2'), ['ns/a']);
  ix.set('ns/b', '');
  ix.delete('ns/a');
  ix.delete('ns/never');
  assert.deepEqual(ix.claimsOfPv('pv-1'), []);
  assert.deepEqual(ix.claimsOfPv('pv-2'), []);
  assert.equal(ix.size, 0);
});
