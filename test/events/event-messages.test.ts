import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  attachFailedMessage,
  attachSucceededMessage,
  DEFAULT_WAITING_FOR_DETACH_TEXT,
  goQuote,
  multiAttachMessage,
} from '../../src/events/event-messages.js';

test('J1/J2: attach texts, including the trailing space of the success text', () => {
  assert.equal(attachSucceededMessage('pvc-123'), 'AttachVolume.Attach succeeded for volume "pvc-123" ');
  assert.equal(
    attachFailedMessage('pvc-123', new Error('rpc error: code = NotFound desc = disk not found')),
    'AttachVolume.Attach failed for volume "pvc-123" : rpc error: code = NotFound desc = disk not found',
  );
  assert.equal(attachFailedMessage('data', 'plain string'), 'AttachVolume.Attach failed for volume "data" : plain string');
});

test('spec names are quoted as Go %q does', () => {
  assert.equal(goQuote('pv-1'), '"pv-1"');
  assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(goQuote('tab\there\nnl\u0001'), '"tab\\there\\nnl\\x01"');
  assert.equal(goQuote('/subscriptions/s/disks/d'), '"/subscriptions/s/disks/d"');
});

const pods = [
  { namespace: 'team-a', name: 'web-0' },
  { namespace: 'team-a', name: 'web-1' },
  { namespace: 'team-b', name: 'secret-name' },
  { namespace: 'team-c', name: 'other-secret' },
];

test('H3: Multi-Attach texts name only pods of the recipient namespace', () => {
  const h3 = (recipientNamespace: string, podsOnOtherNodes = pods) =>
    multiAttachMessage({ specName: 'pvc-9', recipientNamespace, podsOnOtherNodes, waitingForDetachText: false });
  assert.equal(h3('team-a', []), `Multi-Attach error for volume "pvc-9" Volume is already exclusively attached to one node and can't be attached to another`);
  assert.equal(h3('team-a'), 'Multi-Attach error for volume "pvc-9" Volume is already used by pod(s) web-0, web-1 and 2 pod(s) in different namespaces');
  assert.equal(h3('team-a', pods.slice(0, 1)), 'Multi-Attach error for volume "pvc-9" Volume is already used by pod(s) web-0');
  assert.equal(h3('team-b'), 'Multi-Attach error for volume "pvc-9" Volume is already used by pod(s) secret-name and 3 pod(s) in different namespaces');
  assert.equal(h3('team-z'), 'Multi-Attach error for volume "pvc-9" Volume is already used by 4 pod(s) in different namespaces');
  for (const ns of ['team-a', 'team-b', 'team-c', 'team-z']) {
    const msg = h3(ns);
    for (const p of pods) if (p.namespace !== ns) assert.ok(!msg.includes(p.name), `${ns} must not see ${p.namespace}/${p.name}`);
  }
});

test('H6: the current upstream texts, the default', () => {
  assert.equal(DEFAULT_WAITING_FOR_DETACH_TEXT, true);
  const h6 = (recipientNamespace: string, podsOnOtherNodes = pods) => multiAttachMessage({ specName: 'pvc-9', recipientNamespace, podsOnOtherNodes });
  assert.equal(
    h6('team-a', []),
    'Waiting for detach for volume "pvc-9" Volume is already exclusively attached to one node, waiting on detach before it can be attached to another node',
  );
  assert.equal(h6('team-a'), 'Waiting for detach for volume "pvc-9" Volume is already used by pod(s) web-0, web-1 and 2 pod(s) in different namespaces');
  assert.equal(h6('team-z'), 'Waiting for detach for volume "pvc-9" Volume is already used by 4 pod(s) in different namespaces');
});
