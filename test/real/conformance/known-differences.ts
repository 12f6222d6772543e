/**
 * Where the simulator's answer differs from kube-apiserver's on purpose, each with the reason
 * (docs/conformance.md has the table). `normalise` maps an answer to what must still agree, so
 * a known difference cannot hide another one.
 */
export interface KnownDifference {
  reason: string;
  normalise(answer: any): unknown;
}

export const KNOWN_DIFFERENCES: Record<string, KnownDifference> = {};
