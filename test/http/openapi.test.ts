import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFleet } from './fleet-fixture.js';

describe('/openapi.json', () => {
  it('documents every route from its schemas', async () => {
    const f = createFleet();
    const r = await f.get('/openapi.json');
    assert.equal(r.status, 200);
    const doc = r.json;
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(Object.keys(doc.paths).sort(), [
      '/api/v1/conflicts', '/api/v1/dashboard', '/api/v1/dashboard/nodes', '/api/v1/history', '/api/v1/nodes', '/api/v1/nodes/{name}', '/api/v1/not-converged',
      '/api/v1/operations', '/api/v1/reasons', '/api/v1/search', '/api/v1/stream', '/api/v1/summary',
      '/api/v1/volumes', '/api/v1/volumes/{uniqueName}', '/api/v1/volumes/{uniqueName}/timeline', '/healthz', '/metrics', '/openapi.json', '/readyz',
    ]);
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      assert.deepEqual(Object.keys(item), ['get'], path);
      assert.ok(item.get.responses['200'], path);
      assert.equal(item.get.security === undefined, path === '/healthz' || path === '/readyz', path);
    }
    const list = doc.paths['/api/v1/nodes'].get;
    const state = list.parameters.find((p: { name: string }) => p.name === 'state');
    assert.equal(state.in, 'query');
    assert.equal(state.required, false);
    assert.deepEqual(state.schema.enum, ['healthy', 'unhealthy', 'out-of-service', 'status-pending', 'unmanaged']);
    const limit = list.parameters.find((p: { name: string }) => p.name === 'limit');
    assert.equal(limit.schema.maximum, 500);
    assert.ok(list.responses['400'] && list.responses['401']);
    const node = doc.paths['/api/v1/nodes/{name}'].get;
    assert.deepEqual(node.parameters.map((p: { name: string; in: string; required: boolean }) => [p.name, p.in, p.required]), [['name', 'path', true]]);
    assert.ok(node.responses['404']);
    assert.ok(node.responses['200'].content['application/json'].schema.properties.volumes);
    assert.deepEqual(Object.keys(doc.paths['/metrics'].get.responses['200'].content), ['text/plain']);
    assert.equal(doc.paths['/readyz'].get.responses['503'].description, 'Not ready');
    await f.close();
  });
});
