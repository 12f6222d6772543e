/**
 * `waitingFor`: a one-line answer to "why does nothing happen to this (volume, node) pair?",
 * derived from the same rules the reconciler applies (docs/upstream-rules.md F2-F8, G1-G4, H1, I3,
 * P2), so an operator reads the reason instead of reverse-engineering it from logs.
 *
 * The explanation describes what the next pass will do given the state now; it is not a log of
 * what happened. Undefined means the pair is settled (desired, attached and reported, or gone).
 * {@link diagnose} is the one decision tree: it yields the reason code (src/dashboard/reason-codes.ts),
 * the sentence and the ETA together.
 */
import type { AttachState, OperationKind } from '../cache/world-state.js';
import type { ReasonCode } from '../dashboard/reason-codes.js';
import type { InspectionOptions } from './inspection-view.js';

/** What the rules read about one pair, resolved to names. */
export interface PairFacts {
  readonly node: string;
  readonly healthy: boolean;
  readonly outOfService: boolean;
  readonly desired: boolean;
  readonly attachState: AttachState;
  readonly mounted: boolean;
  readonly reportedAttached: boolean;
  readonly detachRequestedAt: number | null;
  readonly multiAttachForbidden: boolean;
  /** The pending operation matching the pair under G1 (its own key or the volume-wide one). */
  readonly pending?: { readonly op: OperationKind; readonly node: string; readonly startedAt: number };
  /** Open backoff windows of the pair's keys (I3). */
  readonly backoff: ReadonlyArray<{ readonly op: OperationKind; readonly retryAt: number }>;
  /** Nodes other than this one holding a confirmed attachment (D7); read for forbidden volumes only. */
  readonly attachedElsewhere: readonly string[];
  /**
   * Nodes whose Uncertain entry holds off this attach (src/reconciler/attach-hold.ts: stricter
   * than upstream); forbidden volumes only, empty when absent.
   */
  readonly uncertainElsewhere?: readonly string[];
  /** Message of the volume's last failure when it was this operation on this node. */
  readonly lastError?: { readonly op: OperationKind; readonly message: string };
}

/**
 * One answer of the decision tree: the reason code, the sentence (`waitingFor`), and when the
 * pair is expected to move: `etaMs` from now (0: the next pass), or `etaWhy` when nothing the
 * controller does on its own will move it (or the time is not the controller's to know).
 */
export interface Diagnosis {
  readonly reason: ReasonCode;
  readonly sentence: string;
  readonly etaMs?: number;
  readonly etaWhy?: string;
}

/** Why the pair waits, or undefined when it is settled. */
export function waitingFor(f: PairFacts, now: number, options: InspectionOptions): string | undefined {
  return diagnose(f, now, options)?.sentence;
}

/**
 * The decision tree behind {@link waitingFor}: reason, sentence and ETA together, or undefined
 * when the pair is settled (desired, attached and in the report set; or neither desired nor
 * attached and no operation of its own in flight).
 */
export function diagnose(f: PairFacts, now: number, options: InspectionOptions): Diagnosis | undefined {
  if (f.desired) {
    if (f.attachState !== 'attached') return attachWait(f, now);
    if (f.reportedAttached) return undefined;
    // D6/K1: an attached volume reaches node status only through the report set, which a
    // detach leaves first (F8).
    const pending = pendingWait(f, 'attach', now);
    if (pending) return { ...pending, sentence: `attach to ${f.node}: ${pending.sentence}` };
    return at('not-reported', `attach to ${f.node}: attached, not yet in node status`, undefined, 'until the volume rejoins the node\'s report set (D6)');
  }
  if (f.attachState !== 'detached') return detachWait(f, now, options);
  // Neither desired nor attached: only an operation still in flight keeps the pair alive.
  return f.pending && f.pending.node === f.node
    ? at('operation-not-needed', `${f.pending.op} on ${f.node} in progress for ${formatDuration(now - f.pending.startedAt)}, no longer needed`, undefined, 'when the operation returns')
    : undefined;
}

function at(reason: ReasonCode, sentence: string, etaMs: number | undefined, etaWhy?: string): Diagnosis {
  return etaMs !== undefined ? { reason, sentence, etaMs: Math.max(0, etaMs) } : { reason, sentence, etaWhy: etaWhy ?? 'unknown' };
}

/** True when the attach explanation is G3 (blocked by a confirmed attachment elsewhere). */
export function isBlockedByAttachment(f: PairFacts): boolean {
  return f.desired && f.attachState !== 'attached' && f.pending === undefined && f.multiAttachForbidden && f.attachedElsewhere.length > 0;
}

/** True when the attach waits for an Uncertain entry elsewhere (and no confirmed one). */
export function isHeldByUncertain(f: PairFacts): boolean {
  return f.desired && f.attachState !== 'attached' && f.pending === undefined && f.multiAttachForbidden
    && f.attachedElsewhere.length === 0 && (f.uncertainElsewhere?.length ?? 0) > 0;
}

/** The node whose entry the attach waits for (G3, or an Uncertain hold), if any. */
export function holderOf(f: PairFacts): string | undefined {
  if (isBlockedByAttachment(f)) return f.attachedElsewhere[0];
  return isHeldByUncertain(f) ? f.uncertainElsewhere?.[0] : undefined;
}

function attachWait(f: PairFacts, now: number): Diagnosis {
  const head = `attach to ${f.node}`;
  const pending = pendingWait(f, 'attach', now);
  if (pending) return { ...pending, sentence: `${head}: ${pending.sentence}` };
  if (isBlockedByAttachment(f)) {
    // G3 / H1: the other node must let go first; its own explanation says why it has not.
    return at('multi-attach', `${head}: attached to ${f.attachedElsewhere.join(', ')} and multi-attach is forbidden, waiting for detach there`, undefined, `until ${f.attachedElsewhere[0]} detaches it`);
  }
  if (isHeldByUncertain(f)) {
    return at('held-by-uncertain', `${head}: attachment uncertain on ${f.uncertainElsewhere?.join(', ')} and multi-attach is forbidden, waiting until it is confirmed or detached there`,
      undefined, `until the attachment on ${f.uncertainElsewhere?.[0]} is confirmed or detached`);
  }
  const backoff = backoffWait(f, 'attach', now);
  if (backoff) return { ...backoff, sentence: `${head}: ${backoff.sentence}` };
  if (f.attachState === 'uncertain') return at('uncertain', `${head}: attachment uncertain, attach is retried on the next pass`, 0);
  return at('attach-next-pass', `${head}: attach starts on the next pass`, 0);
}

function detachWait(f: PairFacts, now: number, o: InspectionOptions): Diagnosis {
  const head = `detach from ${f.node}`;
  const pending = pendingWait(f, 'detach', now);
  if (pending) return { ...pending, sentence: `${head}: ${pending.sentence}` };
  const backoff = backoffWait(f, 'detach', now);
  if (backoff) return { ...backoff, sentence: `${head}: ${backoff.sentence}` };
  // F4-F6: the timer starts the first time the detach pass gets here.
  const started = f.detachRequestedAt;
  const elapsed = started === null ? 0 : now - started;
  const expired = started !== null && elapsed > o.maxWaitForUnmountMs;
  const forceExpired = expired && !o.disableForceDetachOnTimeout;
  const forceDetach = !f.healthy && forceExpired;
  if (f.mounted && !forceDetach && !f.outOfService) {
    if (f.healthy) return at('mounted-node-healthy', `${head}: still mounted, node healthy, will not force`, undefined, 'waits for the kubelet to unmount; never forced on a healthy node');
    if (o.disableForceDetachOnTimeout) {
      return at('mounted-force-disabled', `${head}: still mounted, node unhealthy, force detach on timeout disabled; waiting for unmount or the out-of-service taint`,
        undefined, 'force detach on timeout is disabled: needs unmount or the out-of-service taint');
    }
    if (started === null) {
      return at('mounted-node-unhealthy', `${head}: still mounted, node unhealthy, force detach ${formatDuration(o.maxWaitForUnmountMs)} after the next pass starts the timer`, o.maxWaitForUnmountMs);
    }
    const left = o.maxWaitForUnmountMs - elapsed + 1;
    return at('mounted-node-unhealthy', `${head}: still mounted, node unhealthy, force detach in ${formatDuration(left)}`, left);
  }
  const forced = f.outOfService || f.mounted;
  const why = f.outOfService ? 'node out of service (forced)'
    : f.mounted ? `still mounted, node unhealthy for over ${formatDuration(o.maxWaitForUnmountMs)} (forced)`
      : 'not mounted';
  // F8: the volume leaves node status before the detach is issued.
  const first = f.reportedAttached ? ', after removing it from node status' : '';
  const reason: ReasonCode = forced ? 'force-detach-next-pass' : f.reportedAttached ? 'detach-status-write' : 'detach-next-pass';
  return at(reason, `${head}: ${why}, detach starts on the next pass${first}`, 0);
}

/** G1 / F2: an operation in flight on the pair's key blocks it. */
function pendingWait(f: PairFacts, wanted: OperationKind, now: number): Diagnosis | undefined {
  const p = f.pending;
  if (!p) return undefined;
  const age = formatDuration(now - p.startedAt);
  const blocked: ReasonCode = wanted === 'attach' ? 'attach-blocked-by-operation' : 'detach-blocked-by-operation';
  if (p.node !== f.node) {
    return at(blocked, `waiting for the ${p.op} on ${p.node} to finish (multi-attach forbidden: one operation per volume at a time), running for ${age}`,
      undefined, `when the ${p.op} on ${p.node} returns`);
  }
  if (p.op === wanted) return at(wanted === 'attach' ? 'attach-running' : 'detach-running', `${p.op} in progress for ${age}`, undefined, `when the ${p.op} returns`);
  return at(blocked, `waiting for the ${p.op} in progress on ${f.node} to finish, running for ${age}`, undefined, `when the ${p.op} returns`);
}

/** I3: the key failed recently and is not retried before its window ends. */
function backoffWait(f: PairFacts, op: OperationKind, now: number): Diagnosis | undefined {
  let retryAt = -Infinity;
  for (const b of f.backoff) if (b.op === op && b.retryAt > retryAt) retryAt = b.retryAt;
  if (retryAt <= now) return undefined;
  const err = f.lastError && f.lastError.op === op ? `: ${f.lastError.message}` : '';
  return at(op === 'attach' ? 'attach-backoff' : 'detach-backoff', `last ${op} failed${err}; retry in ${formatDuration(retryAt - now)}`, retryAt - now);
}

/** 850ms, 3.2s, 4m12s, 2h5m. */
export function formatDuration(ms: number): string {
  const t = Math.max(0, Math.round(ms));
  if (t < 1000) return `${t}ms`;
  if (t < 60_000) return `${(t / 1000).toFixed(t < 10_000 ? 1 : 0).replace(/\.0$/, '')}s`;
  const s = Math.floor(t / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}
