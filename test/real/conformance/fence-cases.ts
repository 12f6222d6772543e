/**
 * Conformance cases for what sharded controllers fence their writes with: JSON patch `test`
 * operations on resources and subresources, DeleteOptions preconditions, resourceVersion
 * preconditions on every kind of write, and set-based label selectors on lists and watches.
 * Same rules as ./cases.ts: each case creates its own objects and returns what a client acts on.
 */
import type { ConformanceCase } from './cases.js';
import { call, statusOf, watch, type Target } from './target.js';
import { LEASES, mustCreate, names, NODES, PVS, rvOf, VAS } from './case-helpers.js';

const JSON_PATCH = 'application/json-patch+json';
const MERGE = 'application/merge-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const OWNER = 'fleet-attach.io/owner';
const OWNER_PTR = '/metadata/annotations/fleet-attach.io~1owner';


const node = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels } });
const pv = (name: string, annotations: Record<string, string> = {}, finalizers?: string[]) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name, annotations, ...(finalizers ? { finalizers } : {}) },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', csi: { driver: 'sim.csi.fleet-attach.io', volumeHandle: name } },
});
const va = (name: string) => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'VolumeAttachment',
  metadata: { name },
  spec: { attacher: 'sim.csi.fleet-attach.io', nodeName: `${name}-node`, source: { persistentVolumeName: `${name}-pv` } },
});

/** A JSON patch's outcome: its status, and the owner annotation when it applied. */
const patched = (a: { status: number; body: any }) => (a.status === 200 ? { code: 200, owner: a.body.metadata.annotations?.[OWNER] ?? null } : statusOf(a as any));

export const FENCE_CASES: ConformanceCase[] = [
  {
    name: 'JSON patch test on PV annotations: owner compare-and-swap, a missing path, keys with "/" (~1)',
    async run(t, p) {
      const path = `${PVS}/${p}-pv`;
      await mustCreate(t, PVS, pv(`${p}-pv`, { [OWNER]: 'a' }));
      const jp = (ops: unknown[]) => call(t, 'PATCH', path, { contentType: JSON_PATCH, body: ops });
      const swap = await jp([{ op: 'test', path: OWNER_PTR, value: 'a' }, { op: 'replace', path: OWNER_PTR, value: 'b' }]);
      const lost = await jp([{ op: 'test', path: OWNER_PTR, value: 'a' }, { op: 'replace', path: OWNER_PTR, value: 'c' }]);
      const missingNull = await jp([{ op: 'test', path: '/metadata/annotations/absent', value: null }, { op: 'add', path: '/metadata/annotations/seen', value: '1' }]);
      const missingValue = await jp([{ op: 'test', path: '/metadata/annotations/absent', value: 'x' }]);
      const missingParent = await jp([{ op: 'test', path: '/metadata/labels/absent', value: null }]);
      const missingParentValue = await jp([{ op: 'test', path: '/metadata/labels/absent', value: 'x' }]);
      const added = await jp([{ op: 'add', path: '/metadata/annotations/example.com~1slash', value: 'v' }]);
      const removed = await jp([{ op: 'remove', path: '/metadata/annotations/example.com~1slash' }]);
      const removeAbsent = await jp([{ op: 'remove', path: '/metadata/annotations/example.com~1slash' }]);
      const replaceAbsent = await jp([{ op: 'replace', path: '/metadata/annotations/nothing', value: 'v' }]);
      return {
        swap: patched(swap),
        lost: statusOf(lost),
        missingNull: missingNull.status === 200 ? { code: 200, seen: missingNull.body.metadata.annotations?.seen ?? null } : statusOf(missingNull),
        missingValue: statusOf(missingValue),
        missingParent: missingParent.status === 200 ? 200 : statusOf(missingParent),
        missingParentValue: statusOf(missingParentValue),
        added: added.status === 200 ? added.body.metadata.annotations['example.com/slash'] ?? null : statusOf(added),
        removed: removed.status === 200 ? removed.body.metadata.annotations['example.com/slash'] ?? null : statusOf(removed),
        removeAbsent: statusOf(removeAbsent),
        replaceAbsent: replaceAbsent.status === 200 ? replaceAbsent.body.metadata.annotations.nothing ?? null : statusOf(replaceAbsent),
      };
    },
  },
  {
    name: 'JSON patch test on a VolumeAttachment, a Node and VolumeAttachment status: a failing test is 422 and changes nothing',
    async run(t, p) {
      const v = await mustCreate(t, VAS, va(`${p}-va`));
      await mustCreate(t, NODES, node(`${p}-n`));
      const vaFail = await call(t, 'PATCH', `${VAS}/${p}-va`, { contentType: JSON_PATCH, body: [{ op: 'test', path: '/spec/nodeName', value: 'other' }, { op: 'add', path: '/metadata/labels', value: { x: 'y' } }] });
      const vaOk = await call(t, 'PATCH', `${VAS}/${p}-va`, { contentType: JSON_PATCH, body: [{ op: 'test', path: '/spec/nodeName', value: `${p}-va-node` }, { op: 'add', path: '/metadata/labels', value: { x: 'y' } }] });
      const stFail = await call(t, 'PATCH', `${VAS}/${p}-va/status`, { contentType: JSON_PATCH, body: [{ op: 'test', path: '/status/attached', value: true }, { op: 'replace', path: '/status/attached', value: true }] });
      const stOk = await call(t, 'PATCH', `${VAS}/${p}-va/status`, { contentType: JSON_PATCH, body: [{ op: 'test', path: '/status/attached', value: false }, { op: 'replace', path: '/status/attached', value: true }] });
      const rvTest = await call(t, 'PATCH', `${VAS}/${p}-va`, { contentType: JSON_PATCH, body: [{ op: 'test', path: '/metadata/resourceVersion', value: rvOf(v) }, { op: 'add', path: '/metadata/labels/z', value: 'z' }] });
      const nodeFail = await call(t, 'PATCH', `${NODES}/${p}-n`, { contentType: JSON_PATCH, body: [{ op: 'test', path: '/spec/unschedulable', value: true }, { op: 'add', path: '/spec/unschedulable', value: true }] });
      const after = await call(t, 'GET', `${VAS}/${p}-va`);
      return {
        vaFail: statusOf(vaFail),
        vaOk: [vaOk.status, vaOk.body?.metadata?.labels],
        stFail: statusOf(stFail),
        stOk: [stOk.status, stOk.body?.status?.attached],
        rvTest: statusOf(rvTest),
        nodeFail: statusOf(nodeFail),
        after: [after.body.metadata.labels, after.body.status.attached],
      };
    },
  },
  {
    name: 'DeleteOptions preconditions on an object with finalizers: the right resourceVersion marks it, the old one is then 409',
    async run(t, p) {
      const created = await mustCreate(t, PVS, pv(`${p}-pv`, {}, ['example.com/hold']));
      const path = `${PVS}/${p}-pv`;
      const wrong = await call(t, 'DELETE', path, { body: { preconditions: { resourceVersion: `${Number(rvOf(created)) - 1}` } } });
      const right = await call(t, 'DELETE', path, { body: { preconditions: { resourceVersion: rvOf(created), uid: created.metadata.uid } } });
      const stale = await call(t, 'DELETE', path, { body: { preconditions: { resourceVersion: rvOf(created) } } });
      const again = await call(t, 'DELETE', path, { body: { preconditions: { resourceVersion: rvOf(right.body) } } });
      const held = await call(t, 'GET', path);
      await call(t, 'PATCH', path, { contentType: MERGE, body: { metadata: { finalizers: null } } });
      const gone = await call(t, 'GET', path);
      const missing = await call(t, 'DELETE', `${PVS}/${p}-none`, { body: { preconditions: { resourceVersion: '1' } } });
      const v = await mustCreate(t, VAS, va(`${p}-va`));
      const vaRv = await call(t, 'DELETE', `${VAS}/${p}-va`, { body: { preconditions: { resourceVersion: rvOf(v) } } });
      return {
        wrong: statusOf(wrong),
        right: [right.status, !!right.body?.metadata?.deletionTimestamp, right.body?.metadata?.finalizers],
        rightChangedRv: rvOf(right.body) !== rvOf(created),
        stale: statusOf(stale),
        again: [again.status, rvOf(again.body) === rvOf(right.body)],
        held: held.status,
        gone: gone.status,
        missing: statusOf(missing),
        vaRv: vaRv.status,
      };
    },
  },
  {
    name: 'resourceVersion preconditions: stale merge, strategic and JSON patches, status writes and updates are 409',
    async run(t, p) {
      const n = await mustCreate(t, NODES, node(`${p}-n`));
      const old = rvOf(n);
      const path = `${NODES}/${p}-n`;
      const bump = await call(t, 'PATCH', path, { contentType: MERGE, body: { metadata: { labels: { bump: '1' } } } });
      const fresh = rvOf(bump.body);
      const mergeStale = await call(t, 'PATCH', path, { contentType: MERGE, body: { metadata: { resourceVersion: old, labels: { m: '1' } } } });
      const smpStale = await call(t, 'PATCH', path, { contentType: SMP, body: { metadata: { resourceVersion: old, labels: { s: '1' } } } });
      const jsonStale = await call(t, 'PATCH', path, { contentType: JSON_PATCH, body: [{ op: 'replace', path: '/metadata/resourceVersion', value: old }, { op: 'add', path: '/metadata/labels/j', value: '1' }] });
      const statusMergeStale = await call(t, 'PATCH', `${path}/status`, { contentType: MERGE, body: { metadata: { resourceVersion: old }, status: { volumesInUse: ['x'] } } });
      const statusSmpStale = await call(t, 'PATCH', `${path}/status`, { contentType: SMP, body: { metadata: { resourceVersion: old }, status: { volumesInUse: ['x'] } } });
      const statusPutStale = await call(t, 'PUT', `${path}/status`, { body: { ...bump.body, metadata: { ...bump.body.metadata, resourceVersion: old }, status: { volumesInUse: ['x'] } } });
      const smpFresh = await call(t, 'PATCH', path, { contentType: SMP, body: { metadata: { resourceVersion: fresh, labels: { s: '1' } } } });
      const statusPutFresh = await call(t, 'PUT', `${path}/status`, { body: { ...smpFresh.body, status: { volumesInUse: ['y'] } } });
      const nodePutNoRv = await call(t, 'PUT', path, { body: { ...n, metadata: { name: `${p}-n`, labels: { u: '1' } } } });
      const v = await mustCreate(t, VAS, va(`${p}-va`));
      const vaPutNoRv = await call(t, 'PUT', `${VAS}/${p}-va`, { body: { ...v, metadata: { name: `${p}-va`, labels: { u: '1' } } } });
      const vaStatusPutNoRv = await call(t, 'PUT', `${VAS}/${p}-va/status`, { body: { ...v, metadata: { name: `${p}-va` }, status: { attached: true } } });
      const l = await mustCreate(t, LEASES, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: `${p}-l` }, spec: { holderIdentity: 'a' } });
      const leasePutNoRv = await call(t, 'PUT', `${LEASES}/${p}-l`, { body: { ...l, metadata: { name: `${p}-l` }, spec: { holderIdentity: 'b' } } });
      const pvObj = await mustCreate(t, PVS, pv(`${p}-pv`));
      const pvPutNoRv = await call(t, 'PUT', `${PVS}/${p}-pv`, { body: { ...pvObj, metadata: { name: `${p}-pv`, labels: { u: '1' } } } });
      const drv = await mustCreate(t, '/apis/storage.k8s.io/v1/csidrivers', { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: `${p}.csi.example.com` }, spec: { attachRequired: true } });
      const drvPutNoRv = await call(t, 'PUT', `/apis/storage.k8s.io/v1/csidrivers/${p}.csi.example.com`, { body: { ...drv, metadata: { name: drv.metadata.name, labels: { u: '1' } } } });
      const cn = await mustCreate(t, '/apis/storage.k8s.io/v1/csinodes', { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: `${p}-cn` }, spec: { drivers: [] } });
      const cnPutNoRv = await call(t, 'PUT', `/apis/storage.k8s.io/v1/csinodes/${p}-cn`, { body: { ...cn, metadata: { name: cn.metadata.name, labels: { u: '1' } } } });
      const code = (a: { status: number; body: any }) => (a.status === 200 ? 200 : statusOf(a as any));
      return {
        mergeStale: statusOf(mergeStale),
        smpStale: statusOf(smpStale),
        jsonStale: statusOf(jsonStale),
        statusMergeStale: statusOf(statusMergeStale),
        statusSmpStale: statusOf(statusSmpStale),
        statusPutStale: statusOf(statusPutStale),
        smpFresh: [smpFresh.status, smpFresh.body?.metadata?.labels?.s],
        statusPutFresh: [statusPutFresh.status, statusPutFresh.body?.status?.volumesInUse],
        nodePutNoRv: code(nodePutNoRv),
        vaPutNoRv: code(vaPutNoRv),
        vaStatusPutNoRv: code(vaStatusPutNoRv),
        leasePutNoRv: code(leasePutNoRv),
        pvPutNoRv: code(pvPutNoRv),
        drvPutNoRv: code(drvPutNoRv),
        cnPutNoRv: code(cnPutNoRv),
      };
    },
  },
  {
    name: 'set-based label selectors on lists: in, notin, exists, does-not-exist, mixed with equality',
    async run(t, p) {
      const shapes: Array<Record<string, string>> = [{ tier: 'a' }, { tier: 'b' }, { tier: 'c', extra: '' }, {}, { tier: '' }];
      for (let i = 0; i < shapes.length; i++) await mustCreate(t, NODES, node(`${p}-n${i}`, { sel: p, ...shapes[i] }));
      const q = async (s: string) => {
        const a = await call(t, 'GET', `${NODES}?labelSelector=${encodeURIComponent(`sel=${p},${s}`)}`);
        return a.status === 200 ? names(a.body).map((n: string) => n.slice(p.length + 1)) : statusOf(a);
      };
      return {
        in: await q('tier in (a,b)'),
        inSpaced: await q('tier in ( a , c )'),
        notin: await q('tier notin (a)'),
        exists: await q('tier'),
        notExists: await q('!tier'),
        notExistsSpaced: await q('! tier'),
        mixed: await q('tier!=b,tier,!extra'),
        emptyValue: await q('tier='),
        emptyIn: await q('tier in ()'),
        inTrailingComma: await q('tier in (a,)'),
        inLeadingComma: await q('tier in (,b)'),
        gt: await q('tier>1'),
      };
    },
  },
  {
    name: 'invalid label selectors are 400 BadRequest, on lists and on watches',
    async run(t) {
      const bad = ['a=b,', ',a=b', 'a=b,,c=d', 'tier in (a b)', 'a b', 'tier=-x', 'tier in (a', '!a=b', 'tier>x', 'tier notin a', `tier=${'x'.repeat(64)}`, '-a=b', 'a/b/c=d', 'a in (b),(c)'];
      const out: Record<string, unknown> = {};
      for (const s of bad) out[s] = statusOf(await call(t, 'GET', `${NODES}?labelSelector=${encodeURIComponent(s)}`)).code;
      const w = await watch(t, `${NODES}?watch=true&labelSelector=${encodeURIComponent('a in (b')}`, () => true, 5_000);
      out.watch = { status: w.status, reason: w.body?.reason, code: w.body?.code };
      return out;
    },
  },
  {
    name: 'a watch with a set-based selector sees objects enter and leave the set',
    async run(t, p) {
      const list = await call(t, 'GET', `${NODES}?limit=1`);
      const sel = encodeURIComponent(`w=${p},tier in (gold,silver),!frozen`);
      const w = watch(t, `${NODES}?watch=true&resourceVersion=${rvOf(list.body)}&labelSelector=${sel}`, (f) => f.some((x) => x.type === 'DELETED' && x.object.metadata.name === `${p}-end`));
      await new Promise((r) => setTimeout(r, 300));
      await mustCreate(t, NODES, node(`${p}-gold`, { w: p, tier: 'gold' }));
      await mustCreate(t, NODES, node(`${p}-bronze`, { w: p, tier: 'bronze' }));
      await call(t, 'PATCH', `${NODES}/${p}-bronze`, { contentType: MERGE, body: { metadata: { labels: { tier: 'silver' } } } });
      await call(t, 'PATCH', `${NODES}/${p}-gold`, { contentType: MERGE, body: { metadata: { labels: { frozen: 'yes' } } } });
      await mustCreate(t, NODES, node(`${p}-end`, { w: p, tier: 'gold' }));
      await call(t, 'DELETE', `${NODES}/${p}-end`);
      const r = await w;
      return { status: r.status, frames: r.frames.filter((f) => f.type !== 'BOOKMARK').map((f) => [f.type, f.object.metadata.name.slice(p.length + 1)]) };
    },
  },
];
