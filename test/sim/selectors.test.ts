import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSelector, parseLabelSelector } from '../../src/sim/server/selectors.js';
import { parseRoute } from '../../src/sim/server/route.js';
import { RESOURCES } from '../../src/sim/store/index.js';
import { ApiError } from '../../src/sim/server/status.js';

const obj = (labels?: Record<string, string>, extra: Record<string, unknown> = {}) => ({ metadata: { name: 'x', namespace: 'ns', ...(labels ? { labels } : {}) }, ...extra });

test('label selectors: equality, sets, existence and numeric comparisons', () => {
  const m = (sel: string, labels?: Record<string, string>) => compileSelector(RESOURCES.pods, sel)?.matches(obj(labels));
  assert.equal(m('app=web', { app: 'web' }), true);
  assert.equal(m('app==web', { app: 'db' }), false);
  assert.equal(m('app!=web', {}), true, 'absent key satisfies !=');
  assert.equal(m('app in (web, db)', { app: 'db' }), true);
  assert.equal(m('app notin (web,db)', undefined), true);
  assert.equal(m('app notin (web,db)', { app: 'web' }), false);
  assert.equal(m('example.com/tier', { 'example.com/tier': '' }), true);
  assert.equal(m('!tier', { tier: 'a' }), false);
  assert.equal(m('gen>2', { gen: '3' }), true);
  assert.equal(m('gen<2', { gen: 'x' }), false);
  assert.equal(m('app=web,tier in (a),!old', { app: 'web', tier: 'a' }), true);
  assert.equal(m('app=', { app: '' }), true);
  assert.equal(compileSelector(RESOURCES.pods, ''), undefined);
  assert.equal(m('app in ()', { app: '' }), true, '() is the set of the empty value');
  assert.equal(m('app in (,web)', { app: '' }), true);
  for (const bad of ['app in a', '=x', 'a b', 'app=(x)', 'a=b,', ',a=b', 'a=b,,c=d', 'app in (a b)', `app=${'v'.repeat(64)}`, 'gen>x', '!a=b', 'a/b/c']) {
    assert.throws(() => parseLabelSelector(bad), (e) => e instanceof ApiError && e.code === 400, bad);
  }
});

test('field selectors: supported fields per resource, equality and inequality, index hints', () => {
  const s = compileSelector(RESOURCES.pods, undefined, 'spec.nodeName=n1,status.phase!=Failed,metadata.namespace=ns');
  assert.equal(s?.nodeName, 'n1');
  assert.equal(s?.namespace, 'ns');
  assert.equal(s?.matches(obj(undefined, { spec: { nodeName: 'n1' }, status: { phase: 'Running' } })), true);
  assert.equal(s?.matches(obj(undefined, { spec: { nodeName: 'n1' }, status: { phase: 'Failed' } })), false);
  const unbound = compileSelector(RESOURCES.pods, undefined, 'spec.nodeName=');
  assert.equal(unbound?.nodeName, undefined, 'no index hint for unbound pods');
  assert.equal(unbound?.matches(obj(undefined, { spec: {} })), true);
  assert.throws(() => compileSelector(RESOURCES.nodes, undefined, 'spec.nodeName=n1'), (e) => e instanceof ApiError && e.code === 400);
  assert.equal(compileSelector(RESOURCES.events, undefined, 'involvedObject.name=p')?.matches(obj(undefined, { involvedObject: { name: 'p' } })), true);
});

test('routes follow the Kubernetes path layout', () => {
  const r = (p: string) => {
    const x = parseRoute(p);
    return x.kind === 'resource' ? `${x.info.name} ns=${x.namespace ?? ''} name=${x.name ?? ''} sub=${x.subresource ?? ''}` : x.kind;
  };
  assert.equal(r('/api/v1/pods'), 'pods ns= name= sub=');
  assert.equal(r('/api/v1/namespaces/a/pods/p/status'), 'pods ns=a name=p sub=status');
  assert.equal(r('/api/v1/namespaces/a'), 'namespaces ns= name=a sub=');
  assert.equal(r('/api/v1/namespaces/a/status'), 'namespaces ns= name=a sub=status');
  assert.equal(r('/api/v1/namespaces'), 'namespaces ns= name= sub=');
  assert.equal(r('/apis/storage.k8s.io/v1/volumeattachments/va'), 'volumeattachments ns= name=va sub=');
  assert.equal(r('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1'), 'leases ns=kube-node-lease name=n1 sub=');
  assert.equal(r('/api/v1/pods/p'), 'not-found', 'a namespaced object needs its namespace');
  assert.equal(r('/api/v1/namespaces/a/nodes'), 'not-found', 'cluster-scoped resources have no namespaced path');
  assert.equal(r('/apis/storage.k8s.io/v1/pods'), 'not-found');
  assert.equal(r('/api'), 'api-versions');
  assert.equal(r('/apis/'), 'group-list');
  assert.equal(r('/apis/storage.k8s.io'), 'group');
  assert.equal(r('/api/v1'), 'resource-list');
  assert.equal(r('/healthz'), 'health');
  assert.equal(r('/version'), 'version');
});
