/**
 * The conformance suite's API interactions: the calls the controller, the simulator's actors
 * and kubectl make. Each case runs against one target and returns a normalised answer (the
 * parts a client acts on: status codes, Status reasons, names, the fields the call changed),
 * so that the simulator's and kube-apiserver's answers can be compared with deepEqual. Every
 * case creates its own objects (names carry the case's prefix), so cases share one server.
 */
import { call, statusOf, watch, type Target } from './target.js';
import { LEASES, mustCreate, names, NODES, PVS, rvOf, VAS } from './case-helpers.js';

export interface ConformanceCase {
  name: string;
  run(t: Target, p: string): Promise<unknown>;
}

const node = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels, annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } },
});
const pv = (name: string, handle: string, finalizers?: string[]) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name, ...(finalizers ? { finalizers } : {}) },
  spec: {
    capacity: { storage: '1Gi' },
    accessModes: ['ReadWriteOnce'],
    persistentVolumeReclaimPolicy: 'Retain',
    csi: { driver: 'sim.csi.fleet-attach.io', volumeHandle: handle },
  },
});
const pod = (name: string, nodeName?: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels },
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'busybox' }] },
});
const va = (name: string, nodeName: string, pvName: string) => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'VolumeAttachment',
  metadata: { name },
  spec: { attacher: 'sim.csi.fleet-attach.io', nodeName, source: { persistentVolumeName: pvName } },
});

const PODS = '/api/v1/namespaces/default/pods';
const EVENTS = '/api/v1/namespaces/default/events';


export const CASES: ConformanceCase[] = [
  {
    name: 'discovery: core and storage.k8s.io resources the controller uses, with their verbs',
    async run(t) {
      const api = await call(t, 'GET', '/api');
      const core = await call(t, 'GET', '/api/v1');
      const storage = await call(t, 'GET', '/apis/storage.k8s.io/v1');
      const pick = (list: any, wanted: string[]) =>
        Object.fromEntries(
          (list.resources as any[])
            .filter((r) => wanted.includes(r.name))
            .map((r) => [r.name, { namespaced: r.namespaced, kind: r.kind, verbs: [...r.verbs].sort() }]),
        );
      return {
        versions: api.body.versions,
        core: pick(core.body, ['nodes', 'nodes/status', 'pods', 'persistentvolumes', 'persistentvolumeclaims', 'events']),
        storage: pick(storage.body, ['volumeattachments', 'csidrivers', 'csinodes']),
      };
    },
  },
  {
    name: 'create, get, and errors: NotFound and AlreadyExists as Status bodies',
    async run(t, p) {
      const created = await call(t, 'POST', NODES, { body: node(`${p}-n1`) });
      const dup = await call(t, 'POST', NODES, { body: node(`${p}-n1`) });
      const missing = await call(t, 'GET', `${NODES}/${p}-none`);
      const got = await call(t, 'GET', `${NODES}/${p}-n1`);
      return {
        created: { code: created.status, kind: created.body.kind, apiVersion: created.body.apiVersion, hasUid: !!created.body.metadata.uid, hasRv: !!rvOf(created.body) },
        dup: statusOf(dup),
        missing: statusOf(missing),
        got: { code: got.status, name: got.body.metadata.name, sameRv: rvOf(got.body) === rvOf(created.body) },
      };
    },
  },
  {
    name: 'list with limit and continue, and label selectors',
    async run(t, p) {
      for (let i = 0; i < 5; i++) await mustCreate(t, NODES, node(`${p}-n${i}`, { group: `${p}`, parity: i % 2 ? 'odd' : 'even' }));
      const sel = encodeURIComponent(`group=${p}`);
      const first = await call(t, 'GET', `${NODES}?labelSelector=${sel}&limit=2`);
      const second = await call(t, 'GET', `${NODES}?labelSelector=${sel}&limit=2&continue=${encodeURIComponent(first.body.metadata.continue)}`);
      const third = await call(t, 'GET', `${NODES}?labelSelector=${sel}&limit=2&continue=${encodeURIComponent(second.body.metadata.continue)}`);
      const setBased = await call(t, 'GET', `${NODES}?labelSelector=${encodeURIComponent(`group=${p},parity in (odd)`)}`);
      const notEq = await call(t, 'GET', `${NODES}?labelSelector=${encodeURIComponent(`group=${p},parity!=odd`)}`);
      return {
        pages: [names(first.body), names(second.body), names(third.body)],
        remaining: [first.body.metadata.remainingItemCount, second.body.metadata.remainingItemCount, third.body.metadata.remainingItemCount ?? null],
        lastHasContinue: !!third.body.metadata.continue,
        kind: first.body.kind,
        setBased: names(setBased.body),
        notEq: names(notEq.body),
      };
    },
  },
  {
    name: 'field selector spec.nodeName on pods',
    async run(t, p) {
      await mustCreate(t, PODS, pod(`${p}-a`, `${p}-node-a`));
      await mustCreate(t, PODS, pod(`${p}-b`, `${p}-node-b`));
      const a = await call(t, 'GET', `${PODS}?fieldSelector=${encodeURIComponent(`spec.nodeName=${p}-node-a`)}`);
      const bad = await call(t, 'GET', `${PODS}?fieldSelector=${encodeURIComponent('spec.noSuchField=x')}`);
      return { a: names(a.body), bad: statusOf(bad) };
    },
  },
  {
    name: 'update with a stale resourceVersion is a 409 Conflict',
    async run(t, p) {
      const n = await mustCreate(t, NODES, node(`${p}-n`));
      const fresh = await call(t, 'PUT', `${NODES}/${p}-n`, { body: { ...n, metadata: { ...n.metadata, labels: { a: '1' } } } });
      const stale = await call(t, 'PUT', `${NODES}/${p}-n`, { body: { ...n, metadata: { ...n.metadata, labels: { a: '2' } } } });
      return { fresh: { code: fresh.status, labels: fresh.body.metadata.labels }, stale: statusOf(stale) };
    },
  },
  {
    name: 'JSON patch: test that holds applies, test that fails is 422, on nodes/status',
    async run(t, p) {
      await mustCreate(t, NODES, node(`${p}-n`));
      const path = `${NODES}/${p}-n/status`;
      const ct = 'application/json-patch+json';
      const set = await call(t, 'PATCH', path, { contentType: ct, body: [{ op: 'add', path: '/status/volumesAttached', value: [{ name: 'kubernetes.io/csi/d^v1', devicePath: '' }] }] });
      const ok = await call(t, 'PATCH', path, {
        contentType: ct,
        body: [
          { op: 'test', path: '/status/volumesAttached', value: [{ name: 'kubernetes.io/csi/d^v1', devicePath: '' }] },
          { op: 'replace', path: '/status/volumesAttached', value: [] },
        ],
      });
      const failed = await call(t, 'PATCH', path, {
        contentType: ct,
        body: [
          { op: 'test', path: '/status/volumesAttached', value: [{ name: 'kubernetes.io/csi/d^other', devicePath: '' }] },
          { op: 'replace', path: '/status/volumesAttached', value: [] },
        ],
      });
      return {
        set: { code: set.status, attached: set.body.status.volumesAttached },
        ok: { code: ok.status, attached: ok.body.status.volumesAttached ?? [] },
        failed: statusOf(failed),
      };
    },
  },
  {
    name: 'merge patch on metadata; strategic merge patch on nodes/status replaces volumesAttached whole',
    async run(t, p) {
      await mustCreate(t, NODES, node(`${p}-n`));
      const merge = await call(t, 'PATCH', `${NODES}/${p}-n`, { contentType: 'application/merge-patch+json', body: { metadata: { labels: { x: 'y' } } } });
      const smp = 'application/strategic-merge-patch+json';
      const path = `${NODES}/${p}-n/status`;
      await call(t, 'PATCH', path, { contentType: smp, body: { status: { volumesAttached: [{ name: 'a', devicePath: '' }, { name: 'b', devicePath: '' }] } } });
      const second = await call(t, 'PATCH', path, { contentType: smp, body: { status: { volumesAttached: [{ name: 'c', devicePath: '' }] } } });
      const inUse = await call(t, 'PATCH', path, { contentType: smp, body: { status: { volumesInUse: ['c', 'd'] } } });
      return {
        merge: { code: merge.status, labels: merge.body.metadata.labels },
        attached: second.body.status.volumesAttached.map((v: any) => v.name),
        inUse: inUse.body.status.volumesInUse,
        attachedKept: inUse.body.status.volumesAttached.map((v: any) => v.name),
      };
    },
  },
  {
    name: 'status subresource: a status write keeps the spec, a main write keeps the status',
    async run(t, p) {
      const created = await mustCreate(t, VAS, va(`${p}-va`, `${p}-n`, `${p}-pv`));
      const status = await call(t, 'PATCH', `${VAS}/${p}-va/status`, {
        contentType: 'application/merge-patch+json',
        body: { spec: { nodeName: 'elsewhere' }, status: { attached: true } },
      });
      const main = await call(t, 'PATCH', `${VAS}/${p}-va`, {
        contentType: 'application/merge-patch+json',
        body: { metadata: { labels: { l: 'v' } }, status: { attached: false } },
      });
      return {
        createdStatus: created.status ?? null,
        status: { code: status.status, nodeName: status.body.spec.nodeName, attached: status.body.status.attached },
        main: { code: main.status, attached: main.body.status?.attached, labels: main.body.metadata.labels },
      };
    },
  },
  {
    name: 'VolumeAttachment spec is immutable: an update of nodeName is 422 Invalid',
    async run(t, p) {
      const created = await mustCreate(t, VAS, va(`${p}-va`, `${p}-n`, `${p}-pv`));
      const moved = await call(t, 'PUT', `${VAS}/${p}-va`, { body: { ...created, spec: { ...created.spec, nodeName: `${p}-other` } } });
      return statusOf(moved);
    },
  },
  {
    name: 'graceful deletion of a scheduled pod, then deletion with grace 0',
    async run(t, p) {
      await mustCreate(t, PODS, pod(`${p}-sched`, `${p}-node`));
      await mustCreate(t, PODS, pod(`${p}-unsched`));
      const graceful = await call(t, 'DELETE', `${PODS}/${p}-sched`);
      const still = await call(t, 'GET', `${PODS}/${p}-sched`);
      const now = await call(t, 'DELETE', `${PODS}/${p}-sched`, { body: { gracePeriodSeconds: 0 } });
      const gone = await call(t, 'GET', `${PODS}/${p}-sched`);
      const unsched = await call(t, 'DELETE', `${PODS}/${p}-unsched`);
      const unschedGone = await call(t, 'GET', `${PODS}/${p}-unsched`);
      return {
        graceful: { code: graceful.status, hasDeletionTimestamp: !!graceful.body.metadata.deletionTimestamp, grace: graceful.body.metadata.deletionGracePeriodSeconds },
        still: still.status,
        now: now.status,
        gone: gone.status,
        unsched: unsched.status,
        unschedGone: unschedGone.status,
      };
    },
  },
  {
    name: 'finalizers hold a deleted object until they are removed',
    async run(t, p) {
      await mustCreate(t, PVS, pv(`${p}-pv`, `${p}-h`, ['example.com/hold']));
      const del = await call(t, 'DELETE', `${PVS}/${p}-pv`);
      const held = await call(t, 'GET', `${PVS}/${p}-pv`);
      const cleared = await call(t, 'PATCH', `${PVS}/${p}-pv`, { contentType: 'application/merge-patch+json', body: { metadata: { finalizers: null } } });
      const gone = await call(t, 'GET', `${PVS}/${p}-pv`);
      return {
        del: { code: del.status, deleting: !!del.body.metadata.deletionTimestamp, finalizers: del.body.metadata.finalizers },
        held: held.status,
        cleared: cleared.status,
        gone: gone.status,
      };
    },
  },
  {
    name: 'DeleteOptions preconditions: a wrong uid or resourceVersion is 409, the right ones delete',
    async run(t, p) {
      const created = await mustCreate(t, VAS, va(`${p}-va`, `${p}-n`, `${p}-pv`));
      const wrongUid = await call(t, 'DELETE', `${VAS}/${p}-va`, { body: { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } } });
      const wrongRv = await call(t, 'DELETE', `${VAS}/${p}-va`, { body: { preconditions: { resourceVersion: '1' } } });
      const right = await call(t, 'DELETE', `${VAS}/${p}-va`, { body: { preconditions: { uid: created.metadata.uid, resourceVersion: rvOf(created) } } });
      const gone = await call(t, 'GET', `${VAS}/${p}-va`);
      return { wrongUid: statusOf(wrongUid), wrongRv: statusOf(wrongRv), right: right.status, gone: gone.status };
    },
  },
  {
    name: 'watch from a resourceVersion: ADDED, MODIFIED, DELETED in order, with bookmarks allowed',
    async run(t, p) {
      const list = await call(t, 'GET', `${PVS}?limit=1`);
      const rv = rvOf(list.body);
      const w = watch(t, `${PVS}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`, (f) => f.some((x) => x.type === 'DELETED' && x.object.metadata.name === `${p}-pv`));
      await new Promise((r) => setTimeout(r, 300));
      await mustCreate(t, PVS, pv(`${p}-pv`, `${p}-h`));
      await call(t, 'PATCH', `${PVS}/${p}-pv`, { contentType: 'application/merge-patch+json', body: { metadata: { labels: { a: 'b' } } } });
      await call(t, 'DELETE', `${PVS}/${p}-pv`);
      const r = await w;
      return {
        status: r.status,
        mine: r.frames.filter((f) => f.type !== 'BOOKMARK' && f.object.metadata.name === `${p}-pv`).map((f) => [f.type, f.object.kind]),
        bookmarksAreBare: r.frames.filter((f) => f.type === 'BOOKMARK').every((f) => !!rvOf(f.object) && !f.object.spec),
      };
    },
  },
  {
    name: 'watch-list: sendInitialEvents streams the objects, then a bookmark marking their end',
    async run(t, p) {
      for (let i = 0; i < 3; i++) await mustCreate(t, NODES, node(`${p}-n${i}`, { wl: p }));
      const path = `${NODES}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=${encodeURIComponent(`wl=${p}`)}`;
      const endMark = (f: any) => f.type === 'BOOKMARK' && f.object.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true';
      const r = await watch(t, path, (frames) => frames.some(endMark), 15_000);
      const i = r.frames.findIndex(endMark);
      return {
        status: r.status,
        initial: r.frames.slice(0, i).map((f) => [f.type, f.object.metadata.name]).sort(),
        endBookmark: i >= 0,
      };
    },
  },
  {
    name: 'a watch from a compacted resourceVersion ends with 410 Gone (Expired)',
    async run(t) {
      const r = await watch(t, `${NODES}?watch=true&resourceVersion=1`, (f) => f.length > 0, 10_000);
      const err = r.frames.find((f) => f.type === 'ERROR');
      const st = err?.object ?? r.body;
      return { code: st?.code, reason: st?.reason, kind: st?.kind };
    },
  },
  {
    name: 'Leases: create, update with the right resourceVersion, conflict with a stale one',
    async run(t, p) {
      const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: `${p}-l` }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } };
      const created = await mustCreate(t, LEASES, lease);
      const upd = await call(t, 'PUT', `${LEASES}/${p}-l`, { body: { ...created, spec: { ...created.spec, holderIdentity: 'b' } } });
      const stale = await call(t, 'PUT', `${LEASES}/${p}-l`, { body: { ...created, spec: { ...created.spec, holderIdentity: 'c' } } });
      return { upd: { code: upd.status, holder: upd.body.spec.holderIdentity }, stale: statusOf(stale) };
    },
  },
  {
    name: 'Events: create and patch the count',
    async run(t, p) {
      const ev = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${p}.e`, namespace: 'default' },
        involvedObject: { kind: 'Pod', namespace: 'default', name: `${p}-pod`, apiVersion: 'v1' },
        reason: 'FailedAttachVolume',
        message: 'Multi-Attach error',
        type: 'Warning',
        count: 1,
        source: { component: 'attachdetach-controller' },
      };
      const c = await call(t, 'POST', EVENTS, { body: ev });
      const patched = await call(t, 'PATCH', `${EVENTS}/${p}.e`, { contentType: 'application/strategic-merge-patch+json', body: { count: 2, message: 'again' } });
      return { created: c.status, patched: { code: patched.status, count: patched.body.count, message: patched.body.message, reason: patched.body.reason } };
    },
  },
  {
    name: 'HTTP/2 by ALPN answers as HTTP/1.1 does',
    async run(t, p) {
      await mustCreate(t, NODES, node(`${p}-n`));
      const h2 = await call(t, 'GET', `${NODES}/${p}-n`, { h2: true });
      const missing = await call(t, 'GET', `${NODES}/${p}-none`, { h2: true });
      return { alpn: h2.headers['x-alpn'], code: h2.status, name: h2.body.metadata.name, missing: statusOf(missing) };
    },
  },
  {
    name: 'kubectl tables: a list as meta.k8s.io Table with its columns',
    async run(t, p) {
      await mustCreate(t, NODES, node(`${p}-n`, { tbl: p }));
      const a = await call(t, 'GET', `${NODES}?labelSelector=${encodeURIComponent(`tbl=${p}`)}`, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' });
      return {
        code: a.status,
        kind: a.body.kind,
        apiVersion: a.body.apiVersion,
        columns: (a.body.columnDefinitions as any[]).filter((c) => c.priority === 0).map((c) => c.name),
        rows: (a.body.rows as any[]).map((r) => r.cells[0]),
      };
    },
  },
  {
    name: 'status writes of the actors: PVC phase Bound, pod phase Succeeded, through /status',
    async run(t, p) {
      const pvc = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${p}-c`, namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeName: `${p}-pv`, storageClassName: '' } };
      await mustCreate(t, '/api/v1/namespaces/default/persistentvolumeclaims', pvc);
      const bound = await call(t, 'PATCH', `/api/v1/namespaces/default/persistentvolumeclaims/${p}-c/status`, { contentType: 'application/merge-patch+json', body: { status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } } } });
      await mustCreate(t, PODS, pod(`${p}-pod`, `${p}-node`));
      const done = await call(t, 'PATCH', `${PODS}/${p}-pod/status`, { contentType: 'application/merge-patch+json', body: { status: { phase: 'Succeeded' } } });
      const del = await call(t, 'DELETE', `${PODS}/${p}-pod`);
      const gone = await call(t, 'GET', `${PODS}/${p}-pod`);
      return { bound: [bound.status, bound.body.status.phase], done: [done.status, done.body.status.phase], finishedPodGoesAtOnce: [del.status, gone.status] };
    },
  },
  {
    name: 'CSIDriver and CSINode: create and list',
    async run(t, p) {
      const drv = { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: `${p}.csi.example.com` }, spec: { attachRequired: true } };
      const cn = { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: `${p}-n` }, spec: { drivers: [{ name: `${p}.csi.example.com`, nodeID: `${p}-n`, topologyKeys: null }] } };
      const d = await call(t, 'POST', '/apis/storage.k8s.io/v1/csidrivers', { body: drv });
      const c = await call(t, 'POST', '/apis/storage.k8s.io/v1/csinodes', { body: cn });
      const list = await call(t, 'GET', '/apis/storage.k8s.io/v1/csidrivers');
      return { d: [d.status, d.body.spec.attachRequired], c: c.status, listKind: list.body.kind, listed: names(list.body).includes(`${p}.csi.example.com`) };
    },
  },
  {
    name: 'a list at resourceVersion 0 and a watch with timeoutSeconds that ends by itself',
    async run(t, p) {
      await mustCreate(t, NODES, node(`${p}-n`, { rv0: p }));
      const sel = encodeURIComponent(`rv0=${p}`);
      const l = await call(t, 'GET', `${NODES}?resourceVersion=0&labelSelector=${sel}`);
      const w = await watch(t, `${NODES}?watch=true&timeoutSeconds=1&labelSelector=${sel}&resourceVersion=${rvOf(l.body)}`, () => false, 15_000);
      return { list: [l.status, names(l.body)], watchStatus: w.status, watchFrames: w.frames.length };
    },
  },
  {
    name: 'a malformed body is 400 BadRequest; an unknown resource is 404',
    async run(t) {
      const bad = await call(t, 'POST', NODES, { body: '{"kind": "Node", ' });
      const unknown = await call(t, 'GET', '/api/v1/nosuchthings');
      return { bad: statusOf(bad), unknown: unknown.status };
    },
  },
];
