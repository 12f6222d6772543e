/**
 * The summary's watch health: `lastEventAgeMs` is the age of the reflector's last event or
 * bookmark, whenever the summary is first read (a silent watch must not read as fresh).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { controllerNow } from '../../src/cache/controller-clock.js';
import type { Controller } from '../../src/manager/controller.js';
import { createInspectionView } from '../../src/manager/inspection.js';

test('lastEventAgeMs is the age of the last event, not of the first look after it', (t) => {
  const monotonic = performance.now();
  t.mock.method(performance, 'now', () => monotonic); // the controller's clock holds still: ages are exact
  const base = { synced: true, objects: 0, resourceVersion: '1', bookmarks: 0, relists: 0, listRetries: 0, listRestarts: 0, restarts: 0, watchdogFires: 0, malformed: 0 };
  const stats = [
    { ...base, resource: 'pods', events: 42, lastEventAt: controllerNow() - 90_000 },
    { ...base, resource: 'nodes', events: 0 },
  ];
  const ctl = { state: {}, reflectors: stats.map((s) => ({ stats: () => s })), reconciler: { passTime: {}, planTime: {} } } as unknown as Controller;
  const view = createInspectionView(ctl, { maxWaitForUnmountMs: 1, disableForceDetachOnTimeout: false, kubeApiMaxInFlight: 1, maxApiBacklog: 1 });
  const [pods, nodes] = view.watches();
  assert.equal(pods!.lastEventAgeMs, 90_000);
  assert.equal(nodes!.lastEventAgeMs, undefined, 'no event yet: no age');
});
