/**
 * `waitingFor`: a one-line answer to "why does nothing happen to this (volume, node) pair?",
 * derived from the same rules the reconciler applies (docs/upstream-rules.md F2-F8, G1-G4, H1, I3,
 * P2), so an operator reads the reason instead of reverse-engineering it from logs.
 *
 * The explanation describes what the next pass will do given the state now; it is not a log of
 * what happened. Undefined means the pair is settled (desired and attached, or gone).
 */
import type { AttachState, OperationKind } from '../cache/world-state.js';
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

/** Why the pair waits, or undefined when it is settled. */
export function waitingFor(f: PairFacts, now: number, options: InspectionOptions): string | undefined {
  if (f.desired) return f.attachState === 'attached' ? undefined : attachWait(f, now);
  if (f.attachState !== 'detached') return detachWait(f, now, options);
  // Neither desired nor attached: only an operation still in flight keeps the pair alive.
  return f.pending && f.pending.node === f.node
    ? `${f.pending.op} on ${f.node} in progress for ${formatDuration(now - f.pending.startedAt)}, no longer needed`
    : undefined;
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

function attachWait(f: PairFacts, now: number): string {
  const head = `attach to ${f.node}`;
  const pending = pendingWait(f, 'attach', now);
  if (pending) return `${head}: ${pending}`;
  if (isBlockedByAttachment(f)) {
    // G3 / H1: the other node must let go first; its own explanation says why it has not.
    return `${head}: attached to ${f.attachedElsewhere.join(', ')} and multi-attach is forbidden, waiting for detach there`;
  }
  if (isHeldByUncertain(f)) {
    return `${head}: attachment uncertain on ${f.uncertainElsewhere?.join(', ')} and multi-attach is forbidden, waiting until it is confirmed or detached there`;
  }
  const backoff = backoffWait(f, 'attach', now);
  if (backoff) return `${head}: ${backoff}`;
  if (f.attachState === 'uncertain') return `${head}: attachment uncertain, attach is retried on the next pass`;
  return `${head}: attach starts on the next pass`;
}

function detachWait(f: PairFacts, now: number, o: InspectionOptions): string {
  const head = `detach from ${f.node}`;
  const pending = pendingWait(f, 'detach', now);
  if (pending) return `${head}: ${pending}`;
  const backoff = backoffWait(f, 'detach', now);
  if (backoff) return `${head}: ${backoff}`;
  // F4-F6: the timer starts the first time the detach pass gets here.
  const started = f.detachRequestedAt;
  const elapsed = started === null ? 0 : now - started;
  const expired = started !== null && elapsed > o.maxWaitForUnmountMs;
  const forceExpired = expired && !o.disableForceDetachOnTimeout;
  const forceDetach = !f.healthy && forceExpired;
  if (f.mounted && !forceDetach && !f.outOfService) {
    if (f.healthy) return `${head}: still mounted, node healthy, will not force`;
    if (o.disableForceDetachOnTimeout) {
      return `${head}: still mounted, node unhealthy, force detach on timeout disabled; waiting for unmount or the out-of-service taint`;
    }
    if (started === null) {
      return `${head}: still mounted, node unhealthy, force detach ${formatDuration(o.maxWaitForUnmountMs)} after the next pass starts the timer`;
    }
    return `${head}: still mounted, node unhealthy, force detach in ${formatDuration(o.maxWaitForUnmountMs - elapsed + 1)}`;
  }
  const why = f.outOfService ? 'node out of service (forced)'
    : f.mounted ? `still mounted, node unhealthy for over ${formatDuration(o.maxWaitForUnmountMs)} (forced)`
      : 'not mounted';
  // F8: the volume leaves node status before the detach is issued.
  const first = f.reportedAttached ? ', after removing it from node status' : '';
  return `${head}: ${why}, detach starts on the next pass${first}`;
}

/** G1 / F2: an operation in flight on the pair's key blocks it. */
function pendingWait(f: PairFacts, wanted: OperationKind, now: number): string | undefined {
  const p = f.pending;
  if (!p) return undefined;
  const age = formatDuration(now - p.startedAt);
  if (p.node !== f.node) {
    return `waiting for the ${p.op} on ${p.node} to finish (multi-attach forbidden: one operation per volume at a time), running for ${age}`;
  }
  if (p.op === wanted) return `${p.op} in progress for ${age}`;
  return `waiting for the ${p.op} in progress on ${f.node} to finish, running for ${age}`;
}

/** I3: the key failed recently and is not retried before its window ends. */
function backoffWait(f: PairFacts, op: OperationKind, now: number): string | undefined {
  let retryAt = -Infinity;
  for (const b of f.backoff) if (b.op === op && b.retryAt > retryAt) retryAt = b.retryAt;
  if (retryAt <= now) return undefined;
  const err = f.lastError && f.lastError.op === op ? `: ${f.lastError.message}` : '';
  return `last ${op} failed${err}; retry in ${formatDuration(retryAt - now)}`;
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
