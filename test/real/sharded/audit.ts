/**
 * kube-apiserver's audit log as the independent record of who committed what.
 *
 * Level choice: the fenced writes (nodes/status patches and VolumeAttachment creates and
 * deletes, of every user) and the Lease writes in the Lease namespace are logged at
 * RequestResponse, so each successful write carries the object as committed and so its
 * resourceVersion: etcd's revision, the same order the test's watch of the bucket Leases
 * records ownership in. A write is then judged against the holder of its node's bucket at that
 * exact revision, with no clock margin (Metadata level has no resourceVersion and would leave
 * only `stageTimestamp` against a watch's receive time). PersistentVolume writes (the attach
 * lock) are logged at Metadata: only their answers are counted.
 *
 * A write that changes nothing (a status patch replacing the list with an equal one, a second
 * delete of a VolumeAttachment already marked for deletion) is answered with the object's
 * existing version, committed by an earlier write (often the fleet's: a kubelet's status update).
 * So the writes answered with one version of one object, by any user, are grouped, and the
 * change at that version is attributed to the first of them received; the others changed
 * nothing and are counted as no-ops, not judged. (A delete is answered with the version of the
 * deletion itself, a new one, seen on this server.)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { BUCKET_LEASE_PREFIX } from '../../../src/sharding/index.js';

const BUCKET_LEASE = new RegExp(`^${BUCKET_LEASE_PREFIX}(\\d+)$`);

/** Writes the audit policy and returns the kube-apiserver flags that turn it on. */
export function auditFlags(o: { policyPath: string; logPath: string; leaseNamespace: string }): string[] {
  const writes = ['create', 'update', 'patch', 'delete'];
  const policy = {
    apiVersion: 'audit.k8s.io/v1',
    kind: 'Policy',
    omitStages: ['RequestReceived'],
    rules: [
      { level: 'RequestResponse', verbs: writes, resources: [{ group: '', resources: ['nodes/status'] }, { group: 'storage.k8s.io', resources: ['volumeattachments'] }] },
      { level: 'RequestResponse', verbs: writes, namespaces: [o.leaseNamespace], resources: [{ group: 'coordination.k8s.io', resources: ['leases'] }] },
      { level: 'Metadata', verbs: writes, resources: [{ group: '', resources: ['persistentvolumes'] }] },
      { level: 'None' },
    ],
  };
  writeFileSync(o.policyPath, stringify(policy));
  return [`--audit-policy-file=${o.policyPath}`, `--audit-log-path=${o.logPath}`, '--audit-log-format=json', '--audit-log-mode=blocking'];
}

export interface AuditEvent {
  stage: string;
  verb: string;
  user: { username: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  responseObject?: { kind?: string; metadata?: { name?: string; resourceVersion?: string }; spec?: { nodeName?: string; holderIdentity?: string } };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
}

export function readAudit(path: string): AuditEvent[] {
  const out: AuditEvent[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line) as AuditEvent;
    if (e.stage === 'ResponseComplete') out.push(e);
  }
  return out;
}

export const isSuccess = (e: AuditEvent) => (e.responseStatus?.code ?? 0) >= 200 && (e.responseStatus?.code ?? 0) < 300;

/** The resource as RBAC spells it: `nodes/status`, `volumeattachments`. */
export const resourceOf = (e: AuditEvent) => `${e.objectRef?.resource ?? ''}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;

/** A successful write with the version it committed, or none for a no-op. */
export interface Commit {
  event: AuditEvent;
  rv: number;
  name: string;
}

/**
 * The successful writes of `resource` that committed a version: per (object, answered
 * resourceVersion) the first received; `noops` the others.
 */
export function commits(events: readonly AuditEvent[], resource: string): { commits: Commit[]; noops: Commit[]; unversioned: AuditEvent[] } {
  const groups = new Map<string, Commit[]>();
  const unversioned: AuditEvent[] = [];
  for (const e of events) {
    if (resourceOf(e) !== resource || !isSuccess(e)) continue;
    const rv = Number(e.responseObject?.metadata?.resourceVersion ?? NaN);
    const name = e.objectRef?.name ?? e.responseObject?.metadata?.name ?? '';
    if (!Number.isFinite(rv) || name === '') {
      unversioned.push(e);
      continue;
    }
    const key = `${name}@${rv}`;
    const g = groups.get(key) ?? [];
    g.push({ event: e, rv, name });
    groups.set(key, g);
  }
  const out = { commits: [] as Commit[], noops: [] as Commit[], unversioned };
  for (const g of groups.values()) {
    g.sort((a, b) => a.event.requestReceivedTimestamp.localeCompare(b.event.requestReceivedTimestamp));
    out.commits.push(g[0]!);
    out.noops.push(...g.slice(1));
  }
  out.commits.sort((a, b) => a.rv - b.rv);
  return out;
}

/** Answers by user → "verb resource code" → count, for the users given. */
export function answers(events: readonly AuditEvent[], users: readonly string[]): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>(users.map((u) => [u, new Map()]));
  for (const e of events) {
    const m = out.get(e.user.username);
    if (!m) continue;
    const k = `${e.verb} ${resourceOf(e)} ${e.responseStatus?.code ?? '?'}`;
    m.set(k, (m.get(k) ?? 0) + 1);
  }
  return out;
}

export interface Judgement {
  /** Committed writes checked, by "verb resource". */
  checked: Record<string, number>;
  /** Writes that changed nothing (not judged), by "verb resource". */
  noops: Record<string, number>;
  /** Committed writes whose author was not the holder of the node's bucket at that revision. */
  wrong: string[];
  /** Successful writes that carry no committed version (cannot be judged). */
  unversioned: string[];
}

/**
 * Judges every committed node status and VolumeAttachment write of the users `identityOf`
 * names: its author must be `holderAt(node, rv)`, the holder of the node's bucket just before
 * the write's revision. A VolumeAttachment's node is its spec.nodeName as committed.
 */
export function judgeWrites(events: readonly AuditEvent[], o: { identityOf: (username: string) => string | undefined; holderAt: (node: string, rv: number) => string }): Judgement {
  const out: Judgement = { checked: {}, noops: {}, wrong: [], unversioned: [] };
  const bump = (m: Record<string, number>, k: string) => (m[k] = (m[k] ?? 0) + 1);
  for (const resource of ['nodes/status', 'volumeattachments']) {
    const r = commits(events, resource);
    for (const c of r.commits) {
      const id = o.identityOf(c.event.user.username);
      if (id === undefined) continue;
      const node = resource === 'nodes/status' ? c.name : c.event.responseObject?.spec?.nodeName;
      const holder = node === undefined ? undefined : o.holderAt(node, c.rv);
      if (holder !== id) out.wrong.push(`${c.event.verb} ${resource} ${c.name} (node ${node ?? 'unknown'}) at ${c.rv} by ${id}; holder then: ${holder || 'none'}`);
      bump(out.checked, `${c.event.verb} ${resource}`);
    }
    for (const c of r.noops) if (o.identityOf(c.event.user.username) !== undefined) bump(out.noops, `${c.event.verb} ${resource}`);
    for (const e of r.unversioned) if (o.identityOf(e.user.username) !== undefined) out.unversioned.push(`${e.verb} ${resource} ${e.objectRef?.name}`);
  }
  return out;
}

/**
 * The committed bucket Lease writes of the users `identityOf` names that a watch's history
 * (`history(b)`: bucket b's versions with their holder) lacks, or records with another holder.
 */
export function leaseWritesUnseen(events: readonly AuditEvent[], o: { identityOf: (username: string) => string | undefined; history: (b: number) => ReadonlyArray<{ rv: number; holder: string }> }): { writes: number; unseen: string[] } {
  const out = { writes: 0, unseen: [] as string[] };
  for (const e of events) {
    const name = e.objectRef?.name ?? e.responseObject?.metadata?.name ?? '';
    const m = BUCKET_LEASE.exec(name);
    const id = o.identityOf(e.user.username);
    if (!m || e.objectRef?.resource !== 'leases' || !isSuccess(e) || id === undefined) continue;
    out.writes++;
    const rv = Number(e.responseObject?.metadata?.resourceVersion);
    const holder = e.responseObject?.spec?.holderIdentity ?? '';
    const h = o.history(Number(m[1])).find((x) => x.rv === rv);
    if (!h || h.holder !== holder) out.unseen.push(`${e.verb} ${name} at ${rv} by ${id} (holder ${holder}): watch ${h ? `says ${h.holder}` : 'has no such version'}`);
  }
  return out;
}

/** The revision at which a member Lease was first fenced (holder `fenced-by-…`), if it was. */
export function fencedRevision(events: readonly AuditEvent[], memberLease: string): number | undefined {
  let first: number | undefined;
  for (const e of events) {
    if (e.objectRef?.name !== memberLease || !isSuccess(e) || !(e.responseObject?.spec?.holderIdentity ?? '').startsWith('fenced-by-')) continue;
    const rv = Number(e.responseObject?.metadata?.resourceVersion);
    if (Number.isFinite(rv) && (first === undefined || rv < first)) first = rv;
  }
  return first;
}
