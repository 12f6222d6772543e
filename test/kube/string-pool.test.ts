import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StringPool } from '../../src/kube/projections/string-pool.js';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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

  it('leaves no rope behind once the young generation is collected', () => {
    // A child with --expose-gc keeps 2,000 ropes (as they are, through flatCopy, or none), runs
    // two scavenges and counts the concatenated strings in a heap snapshot (they carry no text).
    const script = `
      import { readFileSync, unlinkSync } from 'node:fs';
      import { tmpdir } from 'node:os';
      import { join } from 'node:path';
      import { writeHeapSnapshot } from 'node:v8';
      const { flatCopy } = await import(${JSON.stringify(new URL('../../src/cache/flat-copy.ts', import.meta.url).href)});
      const mode = process.argv[1];
      const mk = (i) => ['kubernetes.io/csi', 'ebs.csi.aws.com'].join('/') + '^vol-' + i;
      const kept = mode === 'none' ? [] : Array.from({ length: 2000 }, (_, i) => (mode === 'flat' ? flatCopy(mk(i)) : mk(i)));
      gc({ type: 'minor' });
      gc({ type: 'minor' });
      const file = writeHeapSnapshot(join(tmpdir(), 'flat-copy-' + process.pid + '.heapsnapshot'));
      const snap = JSON.parse(readFileSync(file, 'utf8'));
      unlinkSync(file);
      const meta = snap.snapshot.meta;
      const width = meta.node_fields.length;
      const typeAt = meta.node_fields.indexOf('type');
      const cons = meta.node_types[typeAt].indexOf('concatenated string');
      let ropes = 0;
      for (let i = 0; i < snap.nodes.length; i += width) if (snap.nodes[i + typeAt] === cons) ropes++;
      process.stdout.write(JSON.stringify({ ropes, kept: kept.length }));
    `;
    const cwd = fileURLToPath(new URL('../..', import.meta.url));
    const run = (mode: string) => JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--expose-gc', '--input-type=module', '-e', script, mode], { cwd, encoding: 'utf8' })) as { ropes: number; kept: number };
    const none = run('none');
    const raw = run('raw');
    const flat = run('flat');
    assert.equal(raw.kept, 2000);
    assert.equal(flat.kept, 2000);
    assert.ok(raw.ropes - none.ropes >= 2000, `the control kept ${raw.ropes - none.ropes} ropes for 2,000 strings: the snapshot does not show them`);
    assert.ok(flat.ropes - none.ropes < 100, `${flat.ropes - none.ropes} ropes left for 2,000 strings through flatCopy`);
  });
});
