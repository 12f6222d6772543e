/**
 * NodeStatusUpdater (rules K1–K5): writes each flagged node's report-as-attached set to
 * `node.status.volumesAttached`, as one merge PATCH of the status subresource per node per pass.
 * The list is `listType=atomic`, so the patch carries the whole list and replaces it; an empty set
 * clears the field. Nothing else is ever written (K5).
 *
 * Writes to one node are serialised, and each write reads the report set when it is sent, not
 * when it was queued: a later write therefore always carries a newer set, and a detach that
 * waited for its node's write (F8) knows the removal reached the API server.
 *
 * This is distinct from the kubelet's node status manager, which owns every other status field.
 */
import { fleetError, isNotSent } from '../errors/index.js';
import { logger, type Logger } from '../log/logger.js';

/** One `status.volumesAttached` entry (K1). */
export interface ReportedVolume {
  readonly name: string;
  readonly devicePath: string;
}

/** The merge patch body: only `status.volumesAttached`; `null` clears it. */
export interface VolumesAttachedPatch {
  readonly status: { readonly volumesAttached: readonly ReportedVolume[] | null };
}

/** Writes node status. Expected outcomes resolve; any other failure rejects. */
export interface NodeStatusApi {
  /** `PATCH /api/v1/nodes/<node>/status` with `Content-Type: application/merge-patch+json`; `not-found` on 404. */
  patchNodeStatus(nodeName: string, patch: VolumesAttachedPatch): Promise<'patched' | 'not-found'>;
}

/** The actual-state accessors the updater reads and updates. */
export interface ReportedAttachments {
  /** Nodes whose `statusUpdateNeeded` flag is set (K3). Must not clear the flags. */
  flaggedNodes(): Iterable<string>;
  /**
   * If the node is flagged: clears the flag and returns its report set (volumes Attached and
   * not being detached, with their devicePaths: K1). Undefined when the node is not flagged.
   */
  takeVolumesToReport(nodeName: string): readonly ReportedVolume[] | undefined;
  /** Sets the node's flag again (K4: the write failed). */
  setNodeStatusUpdateNeeded(nodeName: string): void;
  /**
   * Runs `fn` when the two mutators above may run (the world state defers mutations while a plan
   * runs); at once when absent. Writes run in the background, so they can meet a plan.
   */
  whenIdle?(fn: () => void): void;
}

export interface NodeLookup {
  /** Whether the Node is in the informer cache (K4: absent ⇒ dropped without a request). */
  hasNode(nodeName: string): boolean;
}

/**
 * - `written`: the PATCH succeeded.
 * - `unchanged`: the node was not flagged; nothing to write.
 * - `node-not-found`: the Node is absent (cache or 404); dropped, not re-flagged (K4).
 * - `failed`: the PATCH failed; the node is flagged again for the next pass (K4).
 */
export type NodeStatusWriteOutcome = 'written' | 'unchanged' | 'node-not-found' | 'failed';

export interface NodeStatusPassSummary {
  written: number;
  unchanged: number;
  nodeNotFound: number;
  failed: number;
}

export interface NodeStatusUpdater {
  /** K3, end of a reconcile pass: writes every flagged node, {@link maxInFlight} at a time. Never rejects. */
  updateNodeStatuses(): Promise<NodeStatusPassSummary>;
  /** F8: writes one node now (after any write already in flight for it). Never rejects. */
  updateNodeStatusForNode(nodeName: string): Promise<NodeStatusWriteOutcome>;
  /** Whether a write to the node is queued or on the wire. */
  writing(nodeName: string): boolean;
  /**
   * Shutdown: writes not yet sent end as `failed` without a request (their flags stay set), and
   * a running round stops after its writes in flight, so stopping never waits for a whole round.
   */
  close(): void;
}

export interface NodeStatusUpdaterDeps {
  api: NodeStatusApi;
  attachments: ReportedAttachments;
  nodes: NodeLookup;
  /** PATCHes in flight during a pass; default 32. */
  maxInFlight?: number;
  log?: Logger;
}

export const DEFAULT_STATUS_MAX_IN_FLIGHT = 32;

/** K1/K2: the patch for a report set. */
export function volumesAttachedPatch(volumes: readonly ReportedVolume[]): VolumesAttachedPatch {
  return { status: { volumesAttached: volumes.length === 0 ? null : volumes } };
}

export function createNodeStatusUpdater(deps: NodeStatusUpdaterDeps): NodeStatusUpdater {
  const maxInFlight = deps.maxInFlight ?? DEFAULT_STATUS_MAX_IN_FLIGHT;
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1) {
    throw fleetError('FA_ERR_INTERNAL', `maxInFlight must be a positive integer, got ${maxInFlight}`);
  }
  return new Updater(deps, maxInFlight, deps.log ?? logger('node-status-updater'));
}

class Updater implements NodeStatusUpdater {
  /** The tail of each node's write chain; removed when the chain drains. */
  private readonly tails = new Map<string, Promise<NodeStatusWriteOutcome>>();
  private closed = false;

  constructor(
    private readonly deps: NodeStatusUpdaterDeps,
    private readonly maxInFlight: number,
    private readonly log: Logger,
  ) {}

  async updateNodeStatuses(): Promise<NodeStatusPassSummary> {
    const summary: NodeStatusPassSummary = { written: 0, unchanged: 0, nodeNotFound: 0, failed: 0 };
    const nodes = [...this.deps.attachments.flaggedNodes()];
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < nodes.length && !this.closed) {
        const outcome = await this.updateNodeStatusForNode(nodes[next++]!);
        if (outcome === 'written') summary.written++;
        else if (outcome === 'unchanged') summary.unchanged++;
        else if (outcome === 'node-not-found') summary.nodeNotFound++;
        else summary.failed++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.maxInFlight, nodes.length) }, lane));
    return summary;
  }

  updateNodeStatusForNode(nodeName: string): Promise<NodeStatusWriteOutcome> {
    const previous = this.tails.get(nodeName);
    const run = previous ? previous.then(() => this.write(nodeName)) : this.write(nodeName);
    this.tails.set(nodeName, run);
    void run.then(() => {
      if (this.tails.get(nodeName) === run) this.tails.delete(nodeName);
    });
    return run;
  }

  writing(nodeName: string): boolean {
    return this.tails.has(nodeName);
  }

  close(): void {
    this.closed = true;
  }

  /** One node: read the set now, PATCH, and restore the flag on failure. Never rejects. */
  private async write(nodeName: string): Promise<NodeStatusWriteOutcome> {
    if (this.closed) return 'failed';
    let volumes: readonly ReportedVolume[] | undefined;
    try {
      if (!this.deps.nodes.hasNode(nodeName)) {
        // Consume the flag: without a Node object there is nothing to write, and upstream does
        // not retry until a Node add event (B4) or another report-set change flags it again.
        if ((await this.idle(() => this.deps.attachments.takeVolumesToReport(nodeName))) === undefined) return 'unchanged';
        this.log.debug({ node: nodeName }, 'node not in cache: volumesAttached not written');
        return 'node-not-found';
      }
      volumes = await this.idle(() => this.deps.attachments.takeVolumesToReport(nodeName));
      if (volumes === undefined) return 'unchanged';
      const result = await this.deps.api.patchNodeStatus(nodeName, volumesAttachedPatch(volumes));
      if (result === 'not-found') {
        this.log.debug({ node: nodeName }, 'node not found: volumesAttached not written');
        return 'node-not-found';
      }
      return 'written';
    } catch (err) {
      if (!isNotSent(err)) this.log.warn({ node: nodeName, err, volumes: volumes?.length }, 'node status update failed; will retry');
      try {
        await this.idle(() => this.deps.attachments.setNodeStatusUpdateNeeded(nodeName));
      } catch (flagErr) {
        this.log.error({ node: nodeName, err: flagErr }, 'node status flag not restored');
      }
      return 'failed';
    }
  }

  /** `fn` at a moment the state may be mutated (see {@link ReportedAttachments.whenIdle}). */
  private idle<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const run = () => {
        try {
          resolve(fn());
        } catch (err) {
          reject(err);
        }
      };
      if (this.deps.attachments.whenIdle) this.deps.attachments.whenIdle(run);
      else run();
    });
  }
}
