/**
 * The 2-minute soak: 300 nodes × 4 pods, every fault kind and churn for one minute,
 * the controller (a child process through the bin) SIGKILLed and restarted twice, the invariant
 * checker on the simulator's store; then faults stop and the cluster must reconverge.
 * `npm run soak -- --minutes 10` is the full-size version (bench/soak.ts).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { runSoak, type SoakReport } from '../../bench/soak.js';
import { FAULT_KINDS } from '../../src/sim/faults/index.js';

// Denser than the bench's defaults (small lists of a few pages survive request faults), so that
// every kind fires within the minute with near certainty (the rarest, delete-node, ~9 expected).
const FAULTS = [
  'drop-watch=10s', 'gone=0.2', 'error500=0.02:committed=0.5', 'error429=0.02:retry-after=1', 'conflict-node-status=0.1',
  'latency=1ms..10ms', 'attach-fail=0.1', 'detach-fail=0.1', 'slow-detach=3s:p=0.3', 'flap=0.3:down=3s',
  'delete-node=0.15:gc=2s:rejoin=10s', 'churn=5',
].join(',');

describe('soak: faults, restarts and churn on a small fleet', { timeout: 200_000 }, () => {
  let report: SoakReport;

  before(async () => {
    report = await runSoak({
      minutes: 1, nodes: 300, podsPerNode: 4, faults: FAULTS, restarts: 2, seed: 7,
      maxWaitForUnmountMs: 30_000, convergeTimeoutMs: 60_000, dswPeriod: '10s', startTimeoutMs: 90_000,
      log: (l) => console.log(`[soak] ${l}`),
    });
    const { violations, ...figures } = report;
    console.log(JSON.stringify({ ...figures, violations: violations.slice(0, 3) }));
  }, { timeout: 190_000 });

  it('restarts the controller at least twice, injects every fault kind, and nothing crashes', () => {
    assert.ok(report.restarts >= 2, `restarts: ${report.restarts}`);
    assert.equal(report.controller_crashes, 0);
    assert.deepEqual(FAULT_KINDS.filter((k) => report.faults[k] === 0), [], `fault counts: ${JSON.stringify(report.faults)}`);
    assert.ok(report.churn.podsCreated + report.churn.podsDeleted > 0, 'churn ran');
    assert.ok(report.operations.attaches > 0 && report.operations.detaches > 0);
  });

  it('reconverges after faults stop: every desired pair attached and reported, nothing stray', () => {
    assert.notEqual(report.reconverge_s, null, `final state: ${JSON.stringify(report.final)}`);
    assert.equal(report.violation_counts['not-converged'], 0);
  });

  it('holds every safety invariant: no RWO volume on two nodes, no early detach of a mounted volume, only attached volumes reported, no duplicate attachment', () => {
    assert.deepEqual(report.violations, []);
  });
});
