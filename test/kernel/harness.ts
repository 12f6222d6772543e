/**
 * Test harness: one random command sequence applied to a WorldState (ids) and a ReferenceWorld
 * (names), with every return value compared, the full observable state compared after each
 * command, and plans compared whenever a `plan` command comes up.
 *
 * The harness plays the controller's part in id management: names are interned before a
 * creating call and looked up (never created) before a no-op-when-absent call; a volume
 * (re)interned gets its multi-attach flag from the harness's per-name spec, as the populator
 * would. When the WorldState recycles a removed node's id, the reference forgets the node too
 * (the documented WorldState rule: a re-created node starts fresh).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { OperationKind, WorldState } from '../../src/cache/world-state.js';
import type { Planner, PlanOptions } from '../../src/kernel/planner.js';
import type { Plan } from '../../src/kernel/plan-result.js';
import { referencePlan, type ReferencePlan } from '../../src/kernel/reference/reference-plan.js';
import { ReferenceWorld } from '../../src/kernel/reference/reference-world.js';

export type Command =
  | { k: 'managed'; n: number }
  | { k: 'healthy' | 'oos'; n: number; on: boolean }
  | { k: 'inUse'; n: number; vols: number[] | null }
  | { k: 'removeNode' | 'statusNeeded' | 'statusClear'; n: number }
  | { k: 'forbidden'; v: number; on: boolean }
  | { k: 'addPod' | 'removePod'; v: number; n: number; p: number }
  | { k: 'mae' | 'attached' | 'uncertain' | 'detached' | 'reportRemove' | 'reportAdd' | 'resetTimer'; v: number; n: number }
  | { k: 'start'; v: number; n: number; op: OperationKind }
  | { k: 'complete'; v: number; n: number; op: OperationKind; ok: boolean }
  | { k: 'advance'; ms: number }
  | { k: 'plan'; maxWait: number; disableForce: boolean };

export interface Universe {
  nodes: number;
  volumes: number;
  pods: number;
}

export function commandArb(u: Universe): fc.Arbitrary<Command> {
  const n = fc.nat(u.nodes - 1);
  const v = fc.nat(u.volumes - 1);
  const op = fc.constantFrom<OperationKind>('attach', 'detach');
  const pair = <K extends string>(...ks: K[]) => fc.record({ k: fc.constantFrom(...ks), v, n });
  return fc.oneof(
    { weight: 2, arbitrary: fc.record({ k: fc.constant('managed' as const), n }) },
    { weight: 3, arbitrary: fc.record({ k: fc.constantFrom('healthy' as const, 'oos' as const), n, on: fc.boolean() }) },
    { weight: 3, arbitrary: fc.record({ k: fc.constant('inUse' as const), n, vols: fc.option(fc.uniqueArray(v, { maxLength: 3 }), { freq: 4 }) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constantFrom('removeNode' as const, 'statusNeeded' as const, 'statusClear' as const), n }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('forbidden' as const), v, on: fc.boolean() }) },
    { weight: 8, arbitrary: fc.record({ k: fc.constantFrom('addPod' as const, 'removePod' as const), v, n, p: fc.nat(u.pods - 1) }) },
    { weight: 10, arbitrary: pair('mae', 'attached', 'uncertain', 'detached', 'reportRemove', 'reportAdd', 'resetTimer') },
    { weight: 5, arbitrary: fc.record({ k: fc.constant('start' as const), v, n, op }) },
    { weight: 5, arbitrary: fc.record({ k: fc.constant('complete' as const), v, n, op, ok: fc.boolean() }) },
    { weight: 4, arbitrary: fc.record({ k: fc.constant('advance' as const), ms: fc.oneof(fc.nat(1200), fc.nat(400_000)) }) },
    { weight: 4, arbitrary: fc.record({ k: fc.constant('plan' as const), maxWait: fc.constantFrom(0, 3000, 360_000), disableForce: fc.boolean() }) },
  );
}

const nodeName = (i: number) => `node-${i}`;
const volumeName = (i: number) => `kubernetes.io/csi/driver^vol-${i}`;
const podName = (i: number) => `pod-uid-${i}`;

export class Harness {
  readonly ref = new ReferenceWorld();
  readonly forbiddenSpec = new Set<string>();
  now = 1_000_000;
  plans = 0;

  /** `checkEachCommand: false` compares the whole state only when asked (large universes). */
  constructor(
    readonly world: WorldState,
    readonly planner: Planner,
    readonly u: Universe,
    private readonly checkEachCommand = true,
  ) {}

  private nid(i: number): number {
    const id = this.world.internNode(nodeName(i));
    this.ref.noteNodeSeen(nodeName(i)); // interning an existing node ends a deferred removal
    return id;
  }
  private vid(i: number): number {
    const name = volumeName(i);
    const known = this.world.findVolume(name);
    if (known !== undefined) return known;
    const id = this.world.internVolume(name);
    this.world.setMultiAttachForbidden(id, this.forbiddenSpec.has(name));
    return id;
  }
  /** Ids of an existing pair's volume and node, or undefined (the call is then a no-op). */
  private ids(v: number, n: number): [number, number] | undefined {
    const vol = this.world.findVolume(volumeName(v));
    const node = this.world.findNode(nodeName(n));
    return vol === undefined || node === undefined ? undefined : [vol, node];
  }

  async apply(c: Command): Promise<void> {
    const w = this.world;
    const r = this.ref;
    const same = (got: unknown, want: unknown) => assert.deepEqual(got, want, `command ${JSON.stringify(c)}`);
    switch (c.k) {
      case 'managed': w.setNodeManaged(this.nid(c.n)); r.setNodeManaged(nodeName(c.n)); break;
      case 'healthy': w.setNodeHealthy(this.nid(c.n), c.on); r.setNodeHealthy(nodeName(c.n), c.on); break;
      case 'oos': w.setNodeOutOfService(this.nid(c.n), c.on); r.setNodeOutOfService(nodeName(c.n), c.on); break;
      case 'inUse': {
        const names = c.vols === null ? null : c.vols.map(volumeName);
        w.setVolumesInUse(this.nid(c.n), names);
        r.setVolumesInUse(nodeName(c.n), names);
        break;
      }
      case 'removeNode': same(w.removeNode(this.nid(c.n)), r.removeNode(nodeName(c.n))); break;
      case 'statusNeeded': same(w.setStatusUpdateNeeded(this.nid(c.n)), r.setStatusUpdateNeeded(nodeName(c.n))); break;
      case 'statusClear': w.clearStatusUpdateNeeded(this.nid(c.n)); r.clearStatusUpdateNeeded(nodeName(c.n)); break;
      case 'forbidden': {
        const name = volumeName(c.v);
        if (c.on) this.forbiddenSpec.add(name);
        else this.forbiddenSpec.delete(name);
        const id = w.findVolume(name);
        if (id !== undefined) w.setMultiAttachForbidden(id, c.on);
        r.setMultiAttachForbidden(name, c.on);
        break;
      }
      case 'addPod': {
        const got = w.addDesiredPod(this.vid(c.v), this.nid(c.n), podName(c.p));
        same(got, r.addDesiredPod(volumeName(c.v), nodeName(c.n), podName(c.p)));
        if (got === 'node-not-managed') w.releaseVolume(this.vid(c.v));
        break;
      }
      case 'removePod': {
        const ids = this.ids(c.v, c.n);
        same(ids ? w.removeDesiredPod(ids[0], ids[1], podName(c.p)) : false, r.removeDesiredPod(volumeName(c.v), nodeName(c.n), podName(c.p)));
        break;
      }
      case 'mae': { const ids = this.ids(c.v, c.n); if (ids) w.setMultiAttachErrorReported(...ids); r.setMultiAttachErrorReported(volumeName(c.v), nodeName(c.n)); break; }
      case 'attached': w.markAttached(this.vid(c.v), this.nid(c.n)); r.markAttached(volumeName(c.v), nodeName(c.n)); break;
      case 'uncertain': w.markUncertain(this.vid(c.v), this.nid(c.n)); r.markUncertain(volumeName(c.v), nodeName(c.n)); break;
      case 'detached': { const ids = this.ids(c.v, c.n); if (ids) w.markDetached(...ids); r.markDetached(volumeName(c.v), nodeName(c.n)); break; }
      case 'reportRemove': { const ids = this.ids(c.v, c.n); same(ids ? w.removeFromReportSet(...ids) : false, r.removeFromReportSet(volumeName(c.v), nodeName(c.n))); break; }
      case 'reportAdd': { const ids = this.ids(c.v, c.n); same(ids ? w.addToReportSet(...ids) : false, r.addToReportSet(volumeName(c.v), nodeName(c.n))); break; }
      case 'resetTimer': { const ids = this.ids(c.v, c.n); if (ids) w.resetDetachTimer(...ids); r.resetDetachTimer(volumeName(c.v), nodeName(c.n)); break; }
      case 'start':
        same(w.tryStartOperation(this.vid(c.v), this.nid(c.n), c.op, this.now), r.tryStartOperation(volumeName(c.v), nodeName(c.n), c.op, this.now));
        break;
      case 'complete': {
        // A volume-wide key is completed by volume and operation; the node may be long gone.
        const vol = w.findVolume(volumeName(c.v));
        const got = vol === undefined ? false : w.completeOperation(vol, w.findNode(nodeName(c.n)) ?? -1, c.op, c.ok, this.now);
        same(got, r.completeOperation(volumeName(c.v), nodeName(c.n), c.op, c.ok, this.now));
        break;
      }
      case 'advance': this.now += c.ms; break;
      case 'plan': await this.comparePlans({ maxWaitForUnmountMs: c.maxWait, disableForceDetachOnTimeout: c.disableForce }); break;
    }
    this.forgetRecycledNodes();
    if (this.checkEachCommand) this.compareState();
  }

  /** Plans with the kernel and the reference, asserts they agree, returns the kernel's plan. */
  async comparePlans(options: PlanOptions): Promise<Plan> {
    const plan = await this.planner.plan(this.now, options);
    const want = normalise(referencePlan(this.ref, this.now, options));
    assert.deepEqual(normalise(this.named(plan)), want, `plan at ${this.now} ${JSON.stringify(options)}`);
    this.plans++;
    return plan;
  }

  private named(plan: Plan): ReferencePlan {
    const w = this.world;
    return {
      detaches: [...plan.detaches].map((d) => ({ ...d, volume: w.volumeName(d.volume), node: w.nodeName(d.node) })),
      attaches: [...plan.attaches].map((a) => ({ volume: w.volumeName(a.volume), node: w.nodeName(a.node) })),
      conflicts: [...plan.conflicts].map((a) => ({ volume: w.volumeName(a.volume), node: w.nodeName(a.node) })),
      statusNodes: [...plan.statusNodes].map((n) => w.nodeName(n)),
    };
  }

  private forgetRecycledNodes(): void {
    for (const name of [...this.ref.nodes.keys()]) {
      if (this.world.findNode(name) === undefined) this.ref.nodes.delete(name);
    }
  }

  /** Every observable of every (volume, node) of the universe, and the counters. */
  compareState(): void {
    const w = this.world;
    const r = this.ref;
    let desired = 0, desiredAttached = 0, attached = 0, uncertain = 0, reported = 0, conflicts = 0, status = 0;
    for (let n = 0; n < this.u.nodes; n++) {
      const node = nodeName(n);
      const id = w.findNode(node);
      const refNode = r.nodes.get(node);
      assert.equal(id === undefined ? false : w.statusUpdateNeeded(id), refNode?.statusUpdateNeeded ?? false, `status ${node}`);
      if (refNode?.statusUpdateNeeded) status++;
      if (id !== undefined) assert.deepEqual(new Set(w.volumesToReport(id).map((v) => w.volumeName(v))), refNode?.report ?? new Set(), `report ${node}`);
      for (let v = 0; v < this.u.volumes; v++) {
        const volume = volumeName(v);
        const vid = w.findVolume(volume);
        const pair = vid === undefined || id === undefined ? undefined : w.pair(vid, id);
        const d = r.dsw.get(node)?.get(volume);
        const a = r.asw.get(volume)?.get(node);
        const where = `${volume} on ${node}`;
        assert.deepEqual(pair && vid !== undefined && id !== undefined ? new Set(w.desiredPods(vid, id)) : new Set(), d?.pods ?? new Set(), `pods ${where}`);
        assert.equal(pair?.desiredPods ?? 0, d?.pods.size ?? 0, `pod count ${where}`);
        assert.equal(pair?.multiAttachErrorReported ?? false, d?.multiAttachErrorReported ?? false, `mae ${where}`);
        assert.equal(pair?.attachState ?? 'detached', a ? (a.attachConfirmed ? 'attached' : 'uncertain') : 'detached', `state ${where}`);
        assert.equal(pair?.detachRequestedAt ?? null, a?.detachRequestedTime ?? null, `timer ${where}`);
        if (pair && a) {
          const inUse = refNode?.volumesInUse ?? null;
          assert.equal(pair.mounted, inUse === null || inUse.has(volume), `mounted ${where}`);
        }
        for (const op of ['attach', 'detach'] as const) {
          // An unknown node id still has an answer for volume-wide keys.
          assert.equal(vid === undefined ? true : w.isSafeToRetry(vid, id ?? -1, op, this.now), r.isSafeToRetry(volume, node, op, this.now), `safe ${op} ${where}`);
        }
        assert.equal(vid === undefined ? false : w.isOperationPending(vid, id ?? -1), r.isOperationPending(volume, node), `pending ${where}`);
        if (d) desired++;
        if (d && a?.attachConfirmed) desiredAttached++;
        if (a?.attachConfirmed) attached++;
        if (a && !a.attachConfirmed) uncertain++;
        if (refNode?.report.has(volume)) reported++;
        if (d && !a?.attachConfirmed && r.forbidden.has(volume)
          && [...(r.asw.get(volume) ?? [])].some(([other, e]) => other !== node && e.attachConfirmed)) conflicts++;
      }
    }
    const flagged = w.nodesNeedingStatusUpdate().map((n) => w.nodeName(n)).sort();
    assert.deepEqual(flagged, [...r.nodes].filter(([, n]) => n.statusUpdateNeeded).map(([name]) => name).sort(), 'nodes needing status');
    const c = w.counts();
    assert.deepEqual(
      [c.desiredPairs, c.desiredAttached, c.attached, c.uncertain, c.reportedAttached, c.conflicts, c.statusUpdatesNeeded, c.pendingOperations],
      [desired, desiredAttached, attached, uncertain, reported, conflicts, status, r.pending.size],
      'counts: desired, desired and attached, attached, uncertain, reported, conflicts, status, pending',
    );
    assert.equal(w.conflicts().length, conflicts);
  }
}

function normalise(p: ReferencePlan): ReferencePlan {
  const key = (x: { volume: string; node: string }) => `${x.volume}\u0000${x.node}`;
  const sort = <T extends { volume: string; node: string }>(xs: T[]) => [...xs].sort((a, b) => (key(a) < key(b) ? -1 : 1));
  return { detaches: sort(p.detaches), attaches: sort(p.attaches), conflicts: sort(p.conflicts), statusNodes: [...p.statusNodes].sort() };
}
