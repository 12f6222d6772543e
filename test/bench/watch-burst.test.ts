/**
 * The simulator's side of the watch-ingest measurement (bench/lib/watch-burst.ts) on a real
 * simulator and client-node's `Watch`: the open pod watch ends before the burst and sees none of
 * it, a watch resumed from the last resourceVersion it saw is served every burst event, and the
 * baseline's lines are those events.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BURST_ANNOTATION, commitWatchBurst, writeBurstLines } from '../../bench/lib/watch-burst.js';
import { collectWatch, pod, until, withSim } from '../sim/sim-helpers.js';

test('a watch burst: the open pod watch ends first, a resumed watch gets each burst event once, the lines are those events', () =>
  withSim({}, async (sim, kc) => {
    for (let i = 0; i < 30; i++) sim.store.create('pods', pod(`p-${String(i).padStart(2, '0')}`));
    sim.store.create('persistentvolumes', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-unrelated' }, spec: {} });
    const live = await collectWatch(kc, '/api/v1/pods', { resourceVersion: String(sim.store.resourceVersion()) });
    const pvWatch = await collectWatch(kc, '/api/v1/persistentvolumes', { resourceVersion: String(sim.store.resourceVersion()) });
    await until('both watches open', () => sim.server.watchCount() === 2);

    const burst = commitWatchBurst(sim, 20, 7);
    assert.equal(burst.count, 20);
    assert.equal(burst.endedWatches, 1, 'only the pod watch ends');
    assert.equal(sim.store.resourceVersion(), burst.rv0 + 20);
    await until('the pod watch ended', () => live.isDone());
    assert.equal(live.events.length, 0, 'no burst event reached the watch that was open');
    assert.equal(pvWatch.isDone(), false, 'other resources\' watches stay open');

    const resumed = await collectWatch(kc, '/api/v1/pods', { resourceVersion: String(burst.rv0) });
    await until('every burst event', () => resumed.events.length >= 20);
    await new Promise((r) => setTimeout(r, 50));
    resumed.stop();
    pvWatch.stop();
    assert.equal(resumed.events.length, 20, 'each once');
    assert.ok(resumed.events.every((e) => e.type === 'MODIFIED'));
    const annotations = resumed.events.map((e) => (e.obj.metadata as { annotations?: Record<string, string> }).annotations?.[BURST_ANNOTATION]);
    assert.deepEqual(new Set(annotations), new Set(['7']));
    assert.deepEqual(resumed.events.map((e) => e.name), Array.from({ length: 20 }, (_, i) => `p-${String(i).padStart(2, '0')}`), 'the first pods in key order');

    const dir = mkdtempSync(join(tmpdir(), 'fa-burst-'));
    try {
      const file = join(dir, 'lines.jsonl');
      assert.equal(writeBurstLines(sim, burst.rv0, file), 20);
      const lines = readFileSync(file, 'utf8').split('\n').map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string; resourceVersion: string } } });
      assert.deepEqual(lines.map((l) => [l.type, l.object.metadata.name, Number(l.object.metadata.resourceVersion)]), resumed.events.map((e) => [e.type, e.name, e.rv]));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }));
