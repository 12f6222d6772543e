/**
 * The operation executor: starts attach and detach operations (J1–J3) under the one-per-key
 * and backoff rules of the state's operation table (I1–I4), runs them asynchronously (a wait
 * for the external attacher never blocks the loop), and records their outcome in the state,
 * the metrics and the events.
 *
 * Contract: `startAttach`/`startDetach` return at once with the table's answer; `started`
 * means the operation owns its key until it completes. `no-plugin` means no attachable plugin
 * matches the volume: as upstream's operation generator fails before the operation exists, no
 * key is taken and nothing (actual state, events, metrics, backoff) changes; the caller treats
 * it as not started (F10 puts a detach's volume back in the report set), and the next pass tries
 * again. Completions mutate the state through
 * `state.whenIdle`, so they never land in the middle of a plan. After `close()`, running
 * operations are abandoned: their results are dropped (the state is rebuilt at next start).
 *
 * A detach may be gated (F8): it owns its key from the start, but sends nothing until its
 * node's status write has settled; if that write failed the operation is released (no backoff,
 * as upstream never started it) and `onSkipped` runs, so the reconciler's pass never waits
 * for a round trip.
 */
import type { NodeId, StartResult, VolumeId, WorldState } from '../cache/world-state.js';
import type { ControllerMetrics } from '../metrics/controller-metrics.js';
import type { EventRecorder, InvolvedPod } from '../events/index.js';
import { CSI_PLUGIN_NAME, csiPersistentSource, type AttachableVolumePlugin, type VolumePluginManager, type VolumeSpec } from '../plugins/index.js';
import { volumeInfoOf } from '../populator/volume-info.js';
import { logger, type Logger } from '../log/logger.js';
import { isNotSent } from '../errors/index.js';
import { controllerNow } from '../cache/controller-clock.js';
import { notify, type ControllerObserver } from './controller-observer.js';

export interface OperationExecutorDeps {
  state: WorldState;
  plugins: VolumePluginManager;
  metrics: ControllerMetrics;
  events: EventRecorder;
  /** Namespace and name of a pod UID of the desired state. */
  podName(uid: string): { namespace: string; name: string } | undefined;
  /** F9: the live Node's `status.volumesInUse`, or 'not-found'. Rejects on other errors. */
  liveVolumesInUse(nodeName: string): Promise<readonly string[] | 'not-found'>;
  /**
   * Tests only (the 'live-in-use' sharding guard switched off): a detach skips that live read;
   * the reconciler's check of the cached volumesInUse stays.
   */
  skipLiveVolumesInUse?: boolean;
  /**
   * Host time, ms: `controllerNow` (monotonic) unless a test gives its own. Timers and backoff
   * that one component records another compares, so all of them take the same clock.
   */
  now?: () => number;
  log?: Logger;
  /** Told of attach starts and of every outcome (src/operations/controller-observer.ts); none by default. */
  observer?: ControllerObserver;
  /**
   * Whether this replica may start an operation on the node now (several replicas: it holds the
   * node's bucket and is not handing it over). Asked before each start; a refused start is
   * `pending`, as after close(), and leaves no trace. Every node when absent.
   */
  mayStart?: (nodeName: string) => boolean;
  /**
   * Several replicas: the attach lock of a ReadWriteOnce volume's PersistentVolume, so that two
   * replicas (each with nodes of its own) never attach it to two nodes. `take` resolves once the
   * node holds the lock and rejects while another node holds it (the attach then fails and backs
   * off, as a Multi-Attach would wait); `release` clears it once the volume's VolumeAttachment
   * on the node is gone, and never rejects. None when absent (one replica: the state sees every
   * node).
   */
  attachLock?: AttachLock;
}

export interface AttachLock {
  take(pvName: string, nodeName: string): Promise<void>;
  release(pvName: string, nodeName: string): Promise<void>;
}

/** F8 for one detach: `after` resolves true once the node's status write succeeded, false if it failed. */
export interface DetachGate {
  after: Promise<boolean>;
  /** Runs (inside `state.whenIdle`, after the release) when the gate closed and nothing was sent. */
  onSkipped(): void;
}

/** The state's answer, or `no-plugin` when no attachable plugin matches the volume. */
export type StartOutcome = StartResult | 'no-plugin';

export interface OperationExecutor {
  startAttach(volume: VolumeId, node: NodeId): StartOutcome;
  /**
   * Whether a plugin can detach the volume; false (recorded and logged as a `no-plugin` start
   * would be) when none can. The detach pass asks first, so such a volume never leaves its
   * node's report set and costs no status write (F8, F10).
   */
  checkDetachable(volume: VolumeId, node: NodeId): boolean;
  startDetach(volume: VolumeId, node: NodeId, verifySafeToDetach: boolean, gate?: DetachGate): StartOutcome;
  /** Whether operations may start on the node now (`mayStart`); a pass skips a node that may not. */
  mayStartOn(node: NodeId): boolean;
  /** Operations started and not yet completed. */
  inFlight(): number;
  /** Resolves when every running operation has settled (tests). */
  idle(): Promise<void>;
  close(): void;
}

export function createOperationExecutor(deps: OperationExecutorDeps): OperationExecutor {
  return new Executor(deps);
}

type Op = 'attach' | 'detach';

/** What an attach sends: the entry's spec and the plugin that attaches it. */
interface AttachTarget {
  spec: VolumeSpec;
  plugin: AttachableVolumePlugin;
  /** The entry's spec name as the operation starts, for its events (§C, J1, J2). */
  specName: string;
}

/** What a detach sends: the plugin, and the plugin's name for the volume. */
interface DetachTarget {
  plugin: AttachableVolumePlugin;
  volumeName: string;
  spec: VolumeSpec | undefined;
}

/** Distinct (operation, node, volume) refusals remembered for logging once; cleared when full. */
const MAX_REFUSALS_REMEMBERED = 10_000;

class Executor implements OperationExecutor {
  private readonly running = new Set<Promise<void>>();
  private readonly refusals = new Set<string>();
  private closed = false;
  private readonly now: () => number;
  private readonly log: Logger;

  constructor(private readonly d: OperationExecutorDeps) {
    this.now = d.now ?? controllerNow;
    this.log = d.log ?? logger('operation-executor');
  }

  startAttach(volume: VolumeId, node: NodeId): StartOutcome {
    const { state } = this.d;
    // The (volume, node) entry's own spec, taken as upstream's operation takes the entry's spec
    // when it is generated (§C, J1, L2): the VolumeAttachment names the entry's PV and the
    // events quote it, though another PV naming the same volume (one CSI handle) may be the one
    // the volume's spec came from last. An entry given no spec (a bare name) attaches with the
    // volume's.
    const entry = state.desiredSpec(volume, node);
    const spec = (typeof entry === 'object' ? (entry as VolumeSpec) : undefined) ?? volumeInfoOf(state, volume)?.spec;
    const plugin = spec ? this.d.plugins.findAttachablePluginBySpec(spec) : undefined;
    if (!spec || !plugin) return this.noPlugin(volume, node, 'attach');
    const specName = state.specName(volume, node) ?? spec.name;
    return this.start(volume, node, 'attach', () => this.attach(volume, node, { spec, plugin, specName }));
  }

  startDetach(volume: VolumeId, node: NodeId, verifySafeToDetach: boolean, gate?: DetachGate): StartOutcome {
    const target = this.detachTarget(volume);
    if (!target) return this.noPlugin(volume, node, 'detach');
    return this.start(volume, node, 'detach', () => this.detach(volume, node, verifySafeToDetach, gate, target));
  }

  /** A5: a volume known only from node status or a VA is detached by its unique name. */
  private detachTarget(volume: VolumeId): DetachTarget | undefined {
    const { state, plugins } = this.d;
    const unique = state.volumeName(volume);
    const spec = volumeInfoOf(state, volume)?.spec;
    let plugin: AttachableVolumePlugin | undefined;
    let volumeName: string | undefined;
    if (spec) {
      plugin = plugins.findAttachablePluginBySpec(spec);
      volumeName = plugin?.getVolumeName(spec);
    }
    // With a spec, CSI still detaches when its CanAttach says no (upstream
    // findDetachablePluginBySpec), e.g. after its CSIDriver stopped requiring attach (C9).
    if (!plugin && (!spec || unique.startsWith(`${CSI_PLUGIN_NAME}/`))) {
      const found = plugins.findAttachablePluginByUniqueName(unique);
      plugin = found?.plugin;
      volumeName = found?.volumeName;
    }
    return plugin && volumeName ? { plugin, volumeName, spec } : undefined;
  }

  checkDetachable(volume: VolumeId, node: NodeId): boolean {
    if (this.detachTarget(volume)) return true;
    this.noPlugin(volume, node, 'detach');
    return false;
  }

  /**
   * No plugin for the volume: nothing is started. The reason becomes the volume's last error
   * unless it already is (a volume wanted on many nodes would otherwise replace it on every
   * call), and is logged once per operation, node and volume, and again whenever another error
   * was recorded in between, not on every pass that tries again.
   */
  private noPlugin(volume: VolumeId, node: NodeId, op: Op): 'no-plugin' {
    if (this.closed) return 'no-plugin';
    const { state } = this.d;
    const unique = state.volumeName(volume);
    const nodeName = state.nodeName(node);
    const message = `no attachable plugin for volume ${unique}`;
    const key = `${op}\n${nodeName}\n${unique}`;
    const fresh = !this.refusals.has(key);
    if (fresh) {
      if (this.refusals.size >= MAX_REFUSALS_REMEMBERED) this.refusals.clear();
      this.refusals.add(key);
    }
    state.whenIdle(() => {
      const last = volumeInfoOf(state, volume)?.lastError;
      const recorded = last !== undefined && last.op === op && last.message === message;
      if (!recorded) this.recordError(volume, op, nodeName, new Error(message));
      if (fresh || !recorded) this.log.warn({ volume: unique, node: nodeName, op }, 'operation not started: no attachable plugin');
    });
    return 'no-plugin';
  }

  mayStartOn(node: NodeId): boolean {
    return this.d.mayStart === undefined || this.d.mayStart(this.d.state.nodeName(node));
  }

  inFlight(): number {
    return this.running.size;
  }

  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running]);
  }

  close(): void {
    this.closed = true;
  }

  private start(volume: VolumeId, node: NodeId, op: Op, run: () => Promise<void>): StartOutcome {
    if (this.closed) return 'pending';
    if (!this.mayStartOn(node)) return 'pending';
    const r = this.d.state.tryStartOperation(volume, node, op, this.now());
    if (r !== 'started') return r;
    // A detach's start is told by the detach pass, which knows whether and why it is forced.
    if (op === 'attach') notify(this.d.observer, () => ({ kind: 'attach-started', volume: this.d.state.volumeName(volume), node: this.d.state.nodeName(node) }));
    const p = run().catch((err) => this.log.error({ err }, 'operation bookkeeping failed'));
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
    return r;
  }

  private async attach(volume: VolumeId, node: NodeId, { spec, plugin, specName }: AttachTarget): Promise<void> {
    const { state } = this.d;
    const unique = state.volumeName(volume);
    const nodeName = state.nodeName(node);
    const t0 = this.now();
    let error: unknown;
    const locked = this.lockedPv(volume, spec);
    try {
      if (locked !== undefined) await this.d.attachLock!.take(locked, nodeName);
      await plugin.attach(spec, nodeName);
    } catch (err) {
      error = err;
    }
    if (this.closed) return;
    if (!isNotSent(error)) this.observe(plugin, spec, 'volume_attach', t0, error === undefined);
    state.whenIdle(() => {
      const pods = this.scheduledPods(volume, node);
      // The operation's key is released even if recording its outcome throws: a key left
      // pending would block every later operation of the volume (I2) until a restart.
      if (error === undefined) {
        settle(() => state.markAttached(volume, node), () => state.completeOperation(volume, node, 'attach', true, this.now())); // J1 (also joins the report set, D6)
        notify(this.d.observer, () => ({ kind: 'attach-succeeded', volume: unique, node: nodeName }));
        this.d.events.attachSucceeded(pods, specName);
      } else {
        settle(() => state.markUncertain(volume, node), () => state.completeOperation(volume, node, 'attach', false, this.now())); // J2: uncertain, never reported
        // Not sent because this replica is stopping or not leading: nothing failed to tell the pod.
        if (isNotSent(error)) return;
        this.recordError(volume, 'attach', nodeName, error);
        this.notifyFailed(volume, node, 'attach', unique, nodeName, error);
        this.d.events.attachFailed(pods, specName, error);
      }
    });
  }

  private async detach(volume: VolumeId, node: NodeId, verifySafeToDetach: boolean, gate: DetachGate | undefined, target: DetachTarget): Promise<void> {
    const { state } = this.d;
    if (gate && !(await gate.after)) {
      if (this.closed) return;
      state.whenIdle(() => {
        state.releaseOperation(volume, node, 'detach');
        gate.onSkipped();
      });
      return;
    }
    if (this.closed) return;
    const unique = state.volumeName(volume);
    const nodeName = state.nodeName(node);
    const { plugin, volumeName, spec } = target;
    const t0 = this.now();
    let error: unknown;
    const locked = this.lockedPv(volume, spec);
    try {
      if (verifySafeToDetach && this.d.skipLiveVolumesInUse !== true) {
        const inUse = await this.d.liveVolumesInUse(nodeName); // F9; NotFound skips the check
        if (inUse !== 'not-found' && inUse.includes(unique)) throw new Error('volume is still in use by node, according to Node status');
      }
      await plugin.detach(volumeName, nodeName);
      // The detach resolved: the VolumeAttachment is gone (L4), so the node may give the lock up.
      if (locked !== undefined) await this.d.attachLock!.release(locked, nodeName);
    } catch (err) {
      error = err;
    }
    if (this.closed) return;
    if (!isNotSent(error)) this.observe(plugin, spec, 'volume_detach', t0, error === undefined);
    state.whenIdle(() => {
      if (error === undefined) {
        settle(() => state.markDetached(volume, node), () => state.completeOperation(volume, node, 'detach', true, this.now())); // J3
        notify(this.d.observer, () => ({ kind: 'detach-succeeded', volume: unique, node: nodeName }));
      } else {
        settle(() => state.markUncertain(volume, node), () => state.completeOperation(volume, node, 'detach', false, this.now())); // J3: uncertain, stays out of node status
        if (isNotSent(error)) return; // not sent: stopping, not leading, or not this replica's node
        this.recordError(volume, 'detach', nodeName, error);
        this.notifyFailed(volume, node, 'detach', unique, nodeName, error);
        this.log.info({ volume: unique, node: nodeName, err: String(error) }, 'detach failed');
      }
    });
  }

  /** The PV whose attach lock guards the volume: with a lock, for a multi-attach-forbidden volume of a PV. */
  private lockedPv(volume: VolumeId, spec: VolumeSpec | undefined): string | undefined {
    if (this.d.attachLock === undefined || spec === undefined || spec.origin !== 'pv' || !this.d.state.multiAttachForbidden(volume)) return undefined;
    return spec.name;
  }

  /** J4: `storage_operation_duration_seconds`, CSI plugin label `kubernetes.io/csi:<driver>`. */
  private observe(plugin: AttachableVolumePlugin, spec: VolumeSpec | undefined, name: string, t0: number, ok: boolean): void {
    const csi = spec ? csiPersistentSource(spec) : undefined;
    const label = csi ? `${plugin.name}:${csi.driver}` : plugin.name;
    this.d.metrics.operationDuration.observe(
      { volume_plugin: label, operation_name: name, status: ok ? 'success' : 'fail-unknown', migrated: String(spec?.migrated ?? false) },
      (this.now() - t0) / 1000,
    );
  }

  /** A failure with the end of its backoff window (I3), read after completeOperation opened it. */
  private notifyFailed(volume: VolumeId, node: NodeId, op: Op, unique: string, nodeName: string, error: unknown): void {
    notify(this.d.observer, () => {
      let retryAt: number | undefined;
      for (const b of this.d.state.backoffFor(volume, node, this.now())) if (b.op === op) retryAt = Math.max(retryAt ?? 0, b.retryAt);
      const message = error instanceof Error ? error.message : String(error);
      return retryAt === undefined
        ? { kind: `${op}-failed`, op, volume: unique, node: nodeName, error: message }
        : { kind: `${op}-failed`, op, volume: unique, node: nodeName, error: message, retryAt };
    });
  }

  private recordError(volume: VolumeId, op: Op, node: string, error: unknown): void {
    const info = volumeInfoOf(this.d.state, volume);
    // Replaced, not mutated: readers may hold the previous object.
    if (info) this.d.state.setVolumeInfo(volume, { ...info, lastError: { op, node, message: error instanceof Error ? error.message : String(error), at: this.now() } });
  }

  /** J1/J2 recipients: every scheduled pod of the entry. */
  private scheduledPods(volume: VolumeId, node: NodeId): InvolvedPod[] {
    const out: InvolvedPod[] = [];
    for (const uid of this.d.state.desiredPods(volume, node)) {
      const p = this.d.podName(uid);
      if (p) out.push({ namespace: p.namespace, name: p.name, uid });
    }
    return out;
  }
}

/** Records an operation's outcome, then releases its key whatever the recording did. */
function settle(record: () => void, complete: () => void): void {
  try {
    record();
  } finally {
    complete();
  }
}
