/**
 * The reason vocabulary: why a (volume, node) pair is not converged, one code per branch of the
 * decision tree in src/http/waiting-for.ts (which picks the code together with the `waitingFor`
 * sentence and the ETA, so the three never disagree). Every view and the JSON API use these
 * codes; `rule` cites docs/upstream-rules.md.
 *
 * Attach side: the pair is desired and not (yet) attached, or attached and not in the node's
 * report set. Detach side: the pair is attached (or uncertain) and not desired, or an operation
 * still runs on it.
 */

export type ReasonSide = 'attach' | 'detach';

export interface Reason {
  readonly code: ReasonCode;
  readonly side: ReasonSide;
  readonly title: string;
  /** Upstream rule codes (docs/upstream-rules.md) the branch applies. */
  readonly rule: readonly string[];
}

export const REASON_CODES = [
  'attach-running',
  'attach-blocked-by-operation',
  'multi-attach',
  'held-by-uncertain',
  'attach-backoff',
  'uncertain',
  'attach-next-pass',
  'not-reported',
  'detach-running',
  'detach-blocked-by-operation',
  'detach-backoff',
  'mounted-node-healthy',
  'mounted-node-unhealthy',
  'mounted-force-disabled',
  'force-detach-next-pass',
  'detach-status-write',
  'detach-next-pass',
  'operation-not-needed',
] as const;

export type ReasonCode = (typeof REASON_CODES)[number];

const TABLE: Record<ReasonCode, Omit<Reason, 'code'>> = {
  'attach-running': { side: 'attach', title: 'Attach running', rule: ['G1', 'I2'] },
  'attach-blocked-by-operation': { side: 'attach', title: 'Another operation on the volume runs first (one operation per key)', rule: ['G1', 'I1'] },
  'multi-attach': { side: 'attach', title: 'Multi-Attach: attached to another node', rule: ['G3', 'H1'] },
  'held-by-uncertain': { side: 'attach', title: 'Held by an uncertain attachment on another node', rule: ['G3', 'D1'] },
  'attach-backoff': { side: 'attach', title: 'Attach failed, in backoff', rule: ['G4', 'I3'] },
  'uncertain': { side: 'attach', title: 'Attachment uncertain, retried on the next pass', rule: ['D1', 'J2'] },
  'attach-next-pass': { side: 'attach', title: 'Attach starts on the next pass', rule: ['G4'] },
  'not-reported': { side: 'attach', title: 'Attached, not in the node status report set', rule: ['D6', 'K1'] },
  'detach-running': { side: 'detach', title: 'Detach running', rule: ['F2', 'I2'] },
  'detach-blocked-by-operation': { side: 'detach', title: 'Another operation on the volume runs first (one operation per key)', rule: ['F2', 'I1'] },
  'detach-backoff': { side: 'detach', title: 'Detach failed, in backoff', rule: ['F2', 'I3'] },
  'mounted-node-healthy': { side: 'detach', title: 'Still mounted on a healthy node (never forced)', rule: ['F6'] },
  'mounted-node-unhealthy': { side: 'detach', title: 'Still mounted on an unhealthy node, force detach on timeout', rule: ['F4', 'F5', 'F6'] },
  'mounted-force-disabled': { side: 'detach', title: 'Still mounted, force detach on timeout disabled', rule: ['F5', 'P2'] },
  'force-detach-next-pass': { side: 'detach', title: 'Forced detach starts on the next pass', rule: ['F5', 'F9', 'F11'] },
  'detach-status-write': { side: 'detach', title: 'Detach starts after the node status write', rule: ['F8', 'K2'] },
  'detach-next-pass': { side: 'detach', title: 'Not mounted, detach starts on the next pass', rule: ['F7'] },
  'operation-not-needed': { side: 'detach', title: 'Operation in flight no longer needed', rule: ['I2'] },
};

export const REASONS: readonly Reason[] = REASON_CODES.map((code) => ({ code, ...TABLE[code] }));

export function reasonOf(code: ReasonCode): Reason {
  return { code, ...TABLE[code] };
}

export function sideOf(code: ReasonCode): ReasonSide {
  return TABLE[code].side;
}

export function isReasonCode(s: string): s is ReasonCode {
  return Object.hasOwn(TABLE, s);
}
