/**
 * A NodeStatusUpdater for reconciler tests: records which nodes were written and answers with a
 * chosen outcome, without an API. Like upstream's `NewFakeNodeStatusUpdater(returnError)`.
 */
import type { NodeStatusPassSummary, NodeStatusUpdater, NodeStatusWriteOutcome } from './node-status-updater.js';

export interface FakeNodeStatusUpdater extends NodeStatusUpdater {
  /** Nodes passed to {@link NodeStatusUpdater.updateNodeStatusForNode}, in call order. */
  readonly nodeWrites: string[];
  /** Number of {@link NodeStatusUpdater.updateNodeStatuses} passes. */
  passes: number;
  /** Outcome of every single-node write; `failed` plays a failing PATCH. */
  outcome: NodeStatusWriteOutcome;
}

export function createFakeNodeStatusUpdater(opts: { outcome?: NodeStatusWriteOutcome } = {}): FakeNodeStatusUpdater {
  const fake: FakeNodeStatusUpdater = {
    nodeWrites: [],
    passes: 0,
    outcome: opts.outcome ?? 'written',
    async updateNodeStatuses(): Promise<NodeStatusPassSummary> {
      fake.passes++;
      return { written: 0, unchanged: 0, nodeNotFound: 0, failed: 0 };
    },
    async updateNodeStatusForNode(nodeName: string): Promise<NodeStatusWriteOutcome> {
      fake.nodeWrites.push(nodeName);
      return fake.outcome;
    },
    writing: () => false,
    close() {},
  };
  return fake;
}
