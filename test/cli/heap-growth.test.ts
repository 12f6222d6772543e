import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyHeapGrowth } from '../../src/cli/heap-growth.js';
import { parseFlags } from '../../src/cli/flags.js';
import { CONTROLLER_FLAGS } from '../../src/cli/controller-flags.js';
import { isFleetError } from '../../src/errors/index.js';

test('--heap-growth sets V8 heap growing percent; 0 leaves V8 its own heuristics', () => {
  const set: string[] = [];
  applyHeapGrowth(parseFlags(CONTROLLER_FLAGS, []).flags['heap-growth'], (f) => set.push(f));
  applyHeapGrowth(parseFlags(CONTROLLER_FLAGS, ['--heap-growth', '0']).flags['heap-growth'], (f) => set.push(f));
  applyHeapGrowth(parseFlags(CONTROLLER_FLAGS, ['--heap-growth=120']).flags['heap-growth'], (f) => set.push(f));
  assert.deepEqual(set, ['--heap-growing-percent=50', '--heap-growing-percent=120']);
});

test('a --heap-growth out of range is refused, naming the flag', () => {
  for (const bad of ['-1', '401', '1.5', 'x']) {
    assert.throws(() => parseFlags(CONTROLLER_FLAGS, ['--heap-growth', bad]), (e: unknown) => isFleetError(e) && /--heap-growth/.test(e.message));
  }
});
