import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFleet } from './fleet-fixture.js';

describe('/api/v1/summary', () => {
  it('reports counts, loop timings and watch health', async () => {
    const f = createFleet();
    const a = f.node('a');
    const b = f.node('b', { healthy: false, outOfService: true });
    f.node('c', { managed: false, healthy: false });
    const v = f.volume('v');
    const w = f.volume('w');
    f.want(v, a, 'u1');
    f.attach(v, a);
    f.attach(w, b);
    f.state.markUncertain(w, b);
    f.state.tryStartOperation(w, b, 'detach', f.view.now());
    for (const ms of [1, 2, 3, 4, 100]) f.view.loop.pass.record(ms);
    f.view.loop.plan.record(0.5);
    f.view.setWatches([{ resource: 'nodes', synced: true, events: 12, relists: 1, restarts: 0, lastEventAgeMs: 40 }]);
    f.view.setReadiness({ ready: true, role: 'leader' });
    f.view.setApiClient({ inFlight: 96, waiting: 480, maxInFlight: 96, admissionBound: 500 });

    const r = await f.get('/api/v1/summary');
    assert.equal(r.status, 200);
    const s = r.json;
    assert.equal(s.ready, true);
    assert.equal(s.role, 'leader');
    // Both nodes' report sets changed (D6), so both await a status write.
    assert.deepEqual(s.nodes, { total: 3, managed: 2, healthy: 1, outOfService: 1, statusUpdatesPending: 2 });
    assert.equal(s.volumes, 2);
    assert.deepEqual(s.pairs, { total: 2, desired: 1, desiredAttached: 1, attached: 1, uncertain: 1, reportedAsAttached: 1 });
    assert.deepEqual(s.operations, { pending: 1, backoff: 0 });
    assert.equal(s.conflicts, 0);
    assert.deepEqual(s.loop.pass, { lastMs: 100, p50Ms: 3, p99Ms: 100, samples: 5 });
    assert.deepEqual(s.loop.plan, { lastMs: 0.5, p50Ms: 0.5, p99Ms: 0.5, samples: 1 });
    assert.deepEqual(s.apiClient, { inFlight: 96, waiting: 480, maxInFlight: 96, admissionBound: 500 });
    assert.deepEqual(s.watches, [{ resource: 'nodes', synced: true, events: 12, relists: 1, restarts: 0, lastEventAgeMs: 40 }]);
    await f.close();
  });
});
