/**
 * Differences between kube-controller-manager's and fleet-attach's records that are listed
 * deviations. Each entry names its scenario, the row of docs/deviations.md that explains it
 * (that row carries the tag `differential:<scenario>`), and a normalisation that removes exactly
 * that difference from both records; what is left must be equal.
 */
import type { ScenarioRecord } from './driver.js';

export interface KnownDifference {
  /** The rule code(s) in the first column of the docs/deviations.md row. */
  rule: string;
  normalise(r: ScenarioRecord): ScenarioRecord;
}

export const KNOWN_DIFFERENCES: Record<string, KnownDifference> = {};
