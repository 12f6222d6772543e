/**
 * The PV attach lock against the in-process simulator over HTTPS, two replicas (two clients):
 * - take, take again, refusal while another node holds it, release by a non-holder refused,
 *   release by the holder, PVs with and without annotation and label maps;
 * - races: two takers for different nodes at once, many rounds: exactly one wins each round;
 * - a property (fast-check): random batches of concurrent takes and releases from several
 *   nodes are linearisable against the one-holder model, and the stored lock is the model's.
 * The fake (createFakeVolumeLock) answers sequences as the real lock does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createKubeApiClient, type KubeApiClient } from '../../src/kube/api-client.js';
import { loadKubeConfig, type FleetKubeConfig } from '../../src/kube/kube-config.js';
import { startSimulator, type Simulator } from '../../src/sim/server/index.js';
import {
  ATTACH_LOCK_ANNOTATION,
  createFakeVolumeLock,
  createVolumeLock,
  LOCK_BUCKET_LABEL,
  lockValue,
  parseLockValue,
  type ReleaseOutcome,
  type TakeOutcome,
  type VolumeLock,
} from '../../src/sharding/volume-lock.js';

type Op = { kind: 'take' | 'release'; node: string };
type Outcome = TakeOutcome | ReleaseOutcome;

/**
 * The one-holder model: what `op` answers from `holder`, and the holder after it. `conflict` is a
 * legal answer from any state under contention and changes nothing.
 */
function modelStep(holder: string | undefined, op: Op): { outcome: Outcome['outcome']; heldBy?: string; next: string | undefined } {
  if (op.kind === 'take') {
    if (holder === undefined) return { outcome: 'taken', next: op.node };
    return holder === op.node ? { outcome: 'already-held', next: holder } : { outcome: 'held-by', heldBy: holder, next: holder };
  }
  if (holder === undefined) return { outcome: 'not-held', next: undefined };
  return holder === op.node ? { outcome: 'released', next: undefined } : { outcome: 'held-by', heldBy: holder, next: holder };
}

/** Whether `outcomes` (answers to `ops`, run at once) match some order of `ops` from `start` ending at `end`. */
function linearisable(start: string | undefined, ops: Op[], outcomes: Outcome[], end: string | undefined): boolean {
  const pending = ops.map((_, i) => i);
  const search = (holder: string | undefined, left: number[]): boolean => {
    if (left.length === 0) return holder === end;
    return left.some((i) => {
      const got = outcomes[i]!;
      const rest = left.filter((j) => j !== i);
      if (got.outcome === 'conflict') return search(holder, rest);
      const want = modelStep(holder, ops[i]!);
      if (want.outcome !== got.outcome) return false;
      if (got.outcome === 'held-by' && got.holder.node !== want.heldBy) return false;
      return search(want.next, rest);
    });
  };
  return search(start, pending);
}

const run = (lock: VolumeLock, pv: string, op: Op, epoch = 1): Promise<Outcome> =>
  op.kind === 'take' ? lock.take(pv, op.node, { bucket: bucketOf(op.node), epoch }) : lock.release(pv, op.node);
const bucketOf = (node: string) => Number(node.replace(/\D/g, '') || '0') % 1024;

describe('volume lock against the simulator', () => {
  let sim: Simulator;
  const kcs: FleetKubeConfig[] = [];
  let replicaA: VolumeLock;
  let replicaB: VolumeLock;
  let api: KubeApiClient;
  let seq = 0;

  before(async () => {
    sim = await startSimulator({});
    const client = () => {
      const kc = loadKubeConfig({ yaml: sim.kubeconfig, env: {} });
      kcs.push(kc);
      return createKubeApiClient({ kc, qps: 10_000, burst: 10_000 });
    };
    api = client();
    replicaA = createVolumeLock({ api });
    replicaB = createVolumeLock({ api: client() });
  });
  after(async () => {
    for (const kc of kcs) kc.close();
    await sim.stop();
  });

  const makePv = (meta: { annotations?: Record<string, string>; labels?: Record<string, string> } = {}): string => {
    const name = `pv-${++seq}`;
    sim.store.create('persistentvolumes', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name, ...meta },
      spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, csi: { driver: 'sim.csi.fleet-attach.io', volumeHandle: name } },
    });
    return name;
  };
  const stored = (pv: string) => {
    const m = sim.store.get('persistentvolumes', undefined, pv)!.metadata;
    return { lock: m.annotations?.[ATTACH_LOCK_ANNOTATION], bucket: m.labels?.[LOCK_BUCKET_LABEL], annotations: m.annotations, labels: m.labels };
  };

  it('takes a free lock on a PV without annotations or labels, then answers already-held and held-by', async () => {
    const pv = makePv();
    assert.deepEqual(await replicaA.take(pv, 'node-1', { bucket: 7, epoch: 3 }), { outcome: 'taken' });
    assert.deepEqual(stored(pv), { lock: 'node=node-1,epoch=3', bucket: '7', annotations: { [ATTACH_LOCK_ANNOTATION]: 'node=node-1,epoch=3' }, labels: { [LOCK_BUCKET_LABEL]: '7' } });
    assert.deepEqual(await replicaB.take(pv, 'node-1', { bucket: 7, epoch: 4 }), { outcome: 'already-held', holder: { node: 'node-1', epoch: 3 } });
    assert.deepEqual(await replicaB.take(pv, 'node-2', { bucket: 9, epoch: 1 }), { outcome: 'held-by', holder: { node: 'node-1', epoch: 3 } });
    assert.equal(stored(pv).lock, 'node=node-1,epoch=3');
  });

  it('keeps the other annotations and labels of the PV when taking and releasing', async () => {
    const pv = makePv({ annotations: { 'pv.kubernetes.io/provisioned-by': 'sim' }, labels: { zone: 'a' } });
    assert.equal((await replicaA.take(pv, 'node-1', { bucket: 1, epoch: 1 })).outcome, 'taken');
    assert.deepEqual(stored(pv).annotations, { 'pv.kubernetes.io/provisioned-by': 'sim', [ATTACH_LOCK_ANNOTATION]: lockValue('node-1', 1) });
    assert.deepEqual(stored(pv).labels, { zone: 'a', [LOCK_BUCKET_LABEL]: '1' });
    assert.deepEqual(await replicaA.release(pv, 'node-1'), { outcome: 'released' });
    assert.deepEqual(stored(pv).annotations, { 'pv.kubernetes.io/provisioned-by': 'sim' });
    assert.deepEqual(stored(pv).labels, { zone: 'a' });
  });

  it('refuses a release by a node that does not hold the lock, and releases for the holder', async () => {
    const pv = makePv();
    assert.deepEqual(await replicaA.release(pv, 'node-1'), { outcome: 'not-held' });
    await replicaA.take(pv, 'node-1', { bucket: 1, epoch: 2 });
    assert.deepEqual(await replicaB.release(pv, 'node-2'), { outcome: 'held-by', holder: { node: 'node-1', epoch: 2 } });
    assert.equal(stored(pv).lock, lockValue('node-1', 2));
    assert.deepEqual(await replicaB.release(pv, 'node-1'), { outcome: 'released' });
    assert.equal(stored(pv).lock, undefined);
    assert.equal(stored(pv).bucket, undefined);
    assert.deepEqual(await replicaA.take(pv, 'node-2', { bucket: 2, epoch: 1 }), { outcome: 'taken' });
  });

  it('reads an empty value as free and a value written by hand as naming that node', async () => {
    const empty = makePv({ annotations: { [ATTACH_LOCK_ANNOTATION]: '' } });
    assert.deepEqual(await replicaA.take(empty, 'node-3', { bucket: 3, epoch: 1 }), { outcome: 'taken' });
    const byHand = makePv({ annotations: { [ATTACH_LOCK_ANNOTATION]: 'node-4' } });
    assert.deepEqual(await replicaA.take(byHand, 'node-3', { bucket: 3, epoch: 1 }), { outcome: 'held-by', holder: { node: 'node-4' } });
    assert.deepEqual(await replicaA.release(byHand, 'node-4'), { outcome: 'released' });
    assert.deepEqual(parseLockValue(lockValue('n.example-1', 12)), { node: 'n.example-1', epoch: 12 });
  });

  it('answers not-found for a PV that does not exist', async () => {
    assert.deepEqual(await replicaA.take('no-such-pv', 'node-1', { bucket: 1, epoch: 1 }), { outcome: 'not-found' });
    assert.deepEqual(await replicaA.release('no-such-pv', 'node-1'), { outcome: 'not-found' });
  });

  it('of two takers for different nodes racing, exactly one wins, round after round', async () => {
    const pv = makePv();
    const winners: Record<string, number> = { 'node-a': 0, 'node-b': 0 };
    for (let round = 0; round < 40; round++) {
      const [a, b] = await Promise.all([replicaA.take(pv, 'node-a', { bucket: 1, epoch: round }), replicaB.take(pv, 'node-b', { bucket: 2, epoch: round })]);
      const won = [a, b].filter((o) => o.outcome === 'taken');
      assert.equal(won.length, 1, `round ${round}: ${JSON.stringify([a, b])}`);
      const winner = a.outcome === 'taken' ? 'node-a' : 'node-b';
      const loser = a.outcome === 'taken' ? b : a;
      assert.ok(loser.outcome === 'held-by' || loser.outcome === 'conflict', `round ${round}: the loser got ${loser.outcome}`);
      if (loser.outcome === 'held-by') assert.equal(loser.holder.node, winner);
      assert.equal(parseLockValue(stored(pv).lock)?.node, winner);
      winners[winner]!++;
      assert.equal((await (winner === 'node-a' ? replicaB : replicaA).release(pv, winner)).outcome, 'released');
    }
    assert.equal(winners['node-a']! + winners['node-b']!, 40);
  });

  it('property: concurrent takes and releases from several nodes are linearisable against one holder', async () => {
    const nodes = ['node-0', 'node-1', 'node-2'];
    const op = fc.record({ kind: fc.constantFrom<'take' | 'release'>('take', 'release'), node: fc.constantFrom(...nodes) });
    const batch = fc.array(op, { minLength: 1, maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 6 }), async (batches) => {
        const pv = makePv();
        let holder: string | undefined;
        for (const ops of batches) {
          const outcomes = await Promise.all(ops.map((o, i) => run(i % 2 === 0 ? replicaA : replicaB, pv, o)));
          const after = parseLockValue(stored(pv).lock)?.node;
          assert.ok(linearisable(holder, ops, outcomes, after), `not linearisable from ${holder ?? 'free'}: ${JSON.stringify(ops)} → ${JSON.stringify(outcomes)}, stored ${after ?? 'free'}`);
          holder = after;
        }
      }),
      { numRuns: 25 },
    );
  });

  it('the fake answers every sequence as the real lock does', async () => {
    const op = fc.record({ kind: fc.constantFrom<'take' | 'release'>('take', 'release'), node: fc.constantFrom('node-0', 'node-1', 'node-2') });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        const pv = makePv();
        const fake = createFakeVolumeLock();
        for (const [i, o] of ops.entries()) {
          const real = await run(replicaA, pv, o, i);
          assert.deepEqual(await run(fake, pv, o, i), real, `step ${i}: ${JSON.stringify(o)}`);
        }
      }),
      { numRuns: 20 },
    );
  });
});

describe('fake volume lock', () => {
  it('records calls, answers conflict when asked, not-found for missing PVs, and exposes the holder', async () => {
    const lock = createFakeVolumeLock();
    lock.conflictNext();
    assert.deepEqual(await lock.take('pv', 'n1', { bucket: 1, epoch: 1 }), { outcome: 'conflict' });
    assert.deepEqual(await lock.take('pv', 'n1', { bucket: 1, epoch: 1 }), { outcome: 'taken' });
    assert.deepEqual(lock.holderOf('pv'), { node: 'n1', epoch: 1, bucket: 1 });
    lock.setHolder('pv', { node: 'n2', epoch: 5 });
    assert.deepEqual(await lock.release('pv', 'n1'), { outcome: 'held-by', holder: { node: 'n2', epoch: 5 } });
    lock.missing.add('gone');
    assert.deepEqual(await lock.release('gone', 'n1'), { outcome: 'not-found' });
    assert.deepEqual(
      lock.calls.map((c) => `${c.method} ${c.pv} ${c.node}`),
      ['take pv n1', 'take pv n1', 'release pv n1', 'release gone n1'],
    );
  });
});
