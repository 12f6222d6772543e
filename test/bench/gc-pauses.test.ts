// The benches' GC recorder: sums per kind over windows, and the long pauses placed in time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createGcRecorder } from '../../bench/lib/gc-pauses.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

test('a forced full collection is counted as major in its window and listed among its long pauses', async () => {
  const rec = createGcRecorder();
  try {
    const t0 = performance.now();
    gc();
    gc();
    await new Promise((r) => setTimeout(r, 50)); // gc entries are delivered asynchronously
    const t1 = performance.now();
    const stats = rec.stats([[t0, t1]]);
    assert.ok(stats.major.count >= 2, `major collections counted: ${stats.major.count}`);
    const pauses = rec.longPauses([[t0, t1]], 0);
    assert.ok(pauses.filter((p) => p.kind === 'major').length >= 2);
    assert.ok(pauses.every((p, i) => p.start >= t0 && p.start < t1 && (i === 0 || pauses[i - 1].start <= p.start)), 'in the window, in order');
    assert.deepEqual(rec.longPauses([[t0, t1]], 60_000), [], 'none lasted a minute');
    assert.equal(rec.stats([[t1, t1 + 1]]).major.count, 0, 'a window after them holds none');
  } finally {
    rec.close();
  }
});
